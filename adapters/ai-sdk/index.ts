// The `isoagent/ai-sdk` entry: interop with the Vercel AI SDK (`ai@6`, `@ai-sdk/provider@3`,
// optional peers). Its declarations name the AI SDK's types, which is why it is an entry of its
// own: the root entry type-checks without the peers installed.
export { fromAISDK } from '../../src/llm/ai-sdk.ts'
export type { AISDKLanguageModel, FromAISDKOptions } from '../../src/llm/ai-sdk.ts'
export { toAISDKTools } from '../../src/llm/ai-sdk-tools.ts'
export type { AISDKTool, AISDKToolSource } from '../../src/llm/ai-sdk-tools.ts'
export { fromAISDKEmbeddings } from '../../src/retrieval/ai-sdk-embeddings.ts'
export type { FromAISDKEmbeddingsOptions } from '../../src/retrieval/ai-sdk-embeddings.ts'

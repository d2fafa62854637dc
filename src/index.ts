export { Agent } from './session/agent.ts'
export type { AgentOptions, ResumeOptions, SessionOptions } from './session/agent.ts'
export type { WorkflowOptions } from './session/session-options.ts'
export { Session } from './session/session.ts'
export type {
  BashOptions,
  CallOptions,
  EditOptions,
  GrepOptions,
  ProgramOptions,
  ToolDefinition,
} from './session/session.ts'
export type { SessionAgentParts, TaskRequest, TasksOptions } from './session/session.ts'
export type {
  AgentEvent,
  AgentFinishReason,
  AgentRunResult,
  AgentStep,
  AgentToolCall,
  AgentToolResult,
} from './agent/agent-events.ts'
export { DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT } from './agent/agent-loop.ts'
export { MAX_PROMPT_CHARS } from './agent/conversation.ts'
export type { TurnOptions } from './agent/conversation.ts'
export type { BackgroundTaskInfo, BackgroundTaskStatus } from './agent/background-tasks.ts'
export { TASK_LIMITS } from './tools/task/task.ts'
export type { TaskArgs, TaskItem, TaskItemOutcome } from './tools/task/task.ts'
export { TASK_AGENTS } from './tools/task/profiles.ts'
export type { TaskAgent } from './tools/task/profiles.ts'
export { VERIFY_OUTPUT_TAIL_BYTES } from './session/verify.ts'
export type { VerifyCommand, VerifyReport, VerifyResult } from './session/verify.ts'
export type { CustomTool, ToolRuntime } from './session/custom-tool.ts'
export { SNAPSHOT_SCHEMA } from './session/snapshot.ts'
export type { SessionSnapshot } from './session/snapshot.ts'
export { registerWorkspaceKind } from './session/workspace-resolvers.ts'
export { IsoagentError } from './errors.ts'
export type { IsoagentErrorCode, IsoagentErrorOptions } from './errors.ts'
export { toolFailure, toolSuccess } from './tool-result.ts'
export type { PermissionDeniedReason, ToolErrorKind, ToolResult } from './tool-result.ts'
export type { ActiveTool } from './kernel/kernel.ts'
export {
  DEFAULT_TOOL_TIMEOUT_MS,
  CANCEL_GRACE_MS,
  OWN_DEADLINE_MARGIN_MS,
} from './kernel/kernel.ts'
export { TOOL_TIMEOUT_DEFAULTS } from './tools/timeout-defaults.ts'
export type { Origin } from './kernel/origin.ts'
export type { CallState, SessionEvent } from './kernel/events.ts'
export { DEFAULT_EVENT_BUFFER } from './kernel/events.ts'
export type { HookBlock, ToolCall, ToolHooks } from './kernel/hooks.ts'
export type { PermissionDecision, PermissionRules } from './kernel/permissions.ts'
export type { BudgetLimits, BudgetUsage } from './kernel/budget.ts'
export type { PendingConfirmation } from './kernel/confirmations.ts'
export { REDACTED, CREDENTIAL_PATTERNS } from './kernel/sanitize.ts'
export {
  ToolResultTransformPolicy,
  TRANSFORM_POLICY_SCHEMA,
  MARKER_RESERVE_BYTES,
} from './projection/policy.ts'
export type { ToolResultTransformPolicyV1 } from './projection/policy.ts'
export {
  EVIDENCE_SCHEMA,
  TOKEN_ESTIMATOR,
  projectOutput,
  artifactUri,
} from './projection/project.ts'
export type { LossMode, Projection, ToolResultEvidenceV1 } from './projection/project.ts'
export { memoryArtifactStore, DEFAULT_ARTIFACT_STORE_BYTES } from './projection/artifact-store.ts'
export type { ArtifactStore } from './projection/artifact-store.ts'
export type { JsonSchema, ToolScheduling } from './kernel/tool-spec.ts'
export { BASH_TIMEOUT_MS, BASH_MAX_COMMAND_LENGTH, BASH_STREAM_BYTES } from './tools/bash/bash.ts'
export type { BashArgs } from './tools/bash/bash.ts'
export {
  CHANGED_PATHS_MAX_ENTRIES,
  CHANGED_PATHS_MAX_LISTED,
  CHANGED_PATHS_WALK_MS,
} from './tools/bash/changed-paths.ts'
export type { ChangedPaths } from './tools/bash/changed-paths.ts'
export {
  HeadTailCapture,
  CAPTURE_HEAD_BYTES,
  CAPTURE_TAIL_BYTES,
} from './text/head-tail-capture.ts'
export type { CapturedText } from './text/head-tail-capture.ts'
export {
  DEFAULT_GIT_AUTHOR,
  GIT_COMMANDS,
  GIT_DEFAULT_BRANCH,
  GIT_DIFF_BYTES,
  GIT_LIMIT,
} from './tools/git/git.ts'
export type { GitAuthor } from './tools/git/git.ts'
export { runFileScanJob } from './tools/search/pipeline/scan-job.ts'
export { gitStoppedError, stoppableGitBackend } from './tools/git/stopping.ts'
// The backend loads isomorphic-git at its first operation: importing isoagent does not.
export { lazyIsomorphicGitBackend as isomorphicGitBackend } from './tools/git/lazy-backend.ts'
export type { IsomorphicBackendOptions } from './tools/git/isomorphic-backend.ts'
export { workspaceGitFs } from './tools/git/fs-bridge.ts'
export type { IsoGitFs, IsoGitStat } from './tools/git/fs-bridge.ts'
export { PROGRAM_LIMITS } from './tools/program/program.ts'
export {
  WORKFLOW_LIMITS,
  DEFAULT_EXCLUDED_TOOLS,
} from './tools/dynamic-workflow/dynamic-workflow.ts'
export type { DynamicWorkflowArgs } from './tools/dynamic-workflow/dynamic-workflow.ts'
export { memoryWorkflowStore, TERMINAL_EVENTS } from './tools/dynamic-workflow/workflow-store.ts'
export type {
  WorkflowStore,
  WorkflowEvent,
  WorkflowEventBase,
  NewWorkflowEvent,
  StepRetry,
} from './tools/dynamic-workflow/workflow-store.ts'
export {
  workspaceWorkflowStore,
  WORKFLOW_DIR,
} from './tools/dynamic-workflow/workspace-workflow-store.ts'
export { recoverWorkflowStepOutput } from './tools/dynamic-workflow/recover-step-output.ts'
export type { WorkflowHandle, WorkflowInspection } from './session/workflow-handle.ts'
export type { RecoverStepOutputQuery } from './tools/dynamic-workflow/recover-step-output.ts'
export type { ProgramArgs } from './tools/program/program.ts'
export {
  inlineProgramRunner,
  setDefaultProgramRunner,
  defaultProgramRunner,
} from './tools/program/program-runner.ts'
export type { ProgramRunner } from './tools/program/program-runner.ts'
export { NATIVE_LOOP_BOUND } from './tools/program/native-bounds.ts'
export { PROGRAM_MEMORY_BYTES } from './tools/program/quickjs-pool.ts'
export {
  PROGRAM_STACK_BYTES,
  INTERRUPTS_PER_SECOND,
  LOG_LIMITS,
} from './tools/program/run-program.ts'
export type {
  ProgramHost,
  ProgramLimit,
  ProgramLimits,
  ProgramOutcome,
  ProgramSource,
} from './tools/program/run-program.ts'
export {
  importQuickJs,
  quickJsFromModule,
  setDefaultQuickJsLoader,
  defaultQuickJsLoader,
} from './tools/program/quickjs-loader.ts'
export type { QuickJsLoader, QuickJsWasm } from './tools/program/quickjs-loader.ts'
export type {
  LanguageModel,
  ModelCallOptions,
  ModelCapabilities,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelResponseFormat,
  ModelStreamPart,
  ModelTool,
  ModelToolCall,
  ModelToolChoice,
  ModelUsage,
} from './llm/language-model.ts'
export { openAICompatible } from './llm/openai-compatible.ts'
export type { OpenAICompatibleOptions } from './llm/openai-compatible.ts'
export { anthropic, ANTHROPIC_MAX_TOKENS } from './llm/anthropic.ts'
export type { AnthropicOptions } from './llm/anthropic.ts'
export { PROVIDER_DEFAULTS, parseRetryAfter } from './llm/provider-http.ts'
export type { ProviderHttpOptions } from './llm/provider-http.ts'
export { toAnthropicTools, toOpenAITools } from './llm/tool-specs.ts'
export { fromAISDK } from './llm/ai-sdk.ts'
export type { AISDKLanguageModel, FromAISDKOptions } from './llm/ai-sdk.ts'
export { GENERATE_OBJECT_LIMITS } from './tools/generate-object/generate-object.ts'
export type { GenerateObjectArgs } from './tools/generate-object/generate-object.ts'
export type { AnthropicTool, OpenAITool, ToolDefinitionLike } from './llm/tool-specs.ts'
export * from './workspace/index.ts'
export type {
  BrowserLease,
  BrowserSearchFailure,
  BrowserSearchPage,
  BrowserSearchRequest,
  ExtractedResult,
  HeadlessBrowser,
  ResultSelectors,
} from './headless-browser.ts'
export { DEFAULT_ENGINES, searxngEngine } from './tools/web-search/default-engines.ts'
export type { EngineConfig, EngineKind, JsonFields } from './tools/web-search/engine-config.ts'
export { WEB_SEARCH_LIMITS } from './tools/web-search/web-search.ts'
export type { WebSearchOptions } from './tools/web-search/web-search.ts'
export type { BreakerOptions } from './tools/web-search/circuit-breaker.ts'
export type { RetrievalRequirementsNotMet } from './tool-result.ts'
export * from './net/index.ts'
export { SKILL_LIMITS, DEFAULT_SKILL_DIRS } from './skills/skill.ts'
export type {
  Skill,
  SkillKind,
  SkillsOptions,
  SkillsReport,
  SkillDiagnostic,
  SkillEntry,
  SkillSource,
} from './skills/skill.ts'
export type { SkillEvent, WorkflowStepEvent } from './kernel/events.ts'
export * from './mcp-client/index.ts'
export { openAICompatibleEmbeddings } from './retrieval/openai-compatible-embeddings.ts'
export type { OpenAICompatibleEmbeddingsOptions } from './retrieval/openai-compatible-embeddings.ts'
export {
  checkEmbeddingAnswer,
  embeddingFailure,
  isRetryableEmbeddingFailure,
} from './retrieval/embedding-model.ts'
export type {
  EmbeddingFailureKind,
  EmbeddingInput,
  EmbeddingModel,
  EmbeddingVector,
} from './retrieval/embedding-model.ts'
export { CHUNK_LIMITS, chunkId } from './retrieval/chunker.ts'
export {
  WORKERS_AI_DEFAULT_EMBEDDING_MODEL,
  workersAIEmbeddings,
  workersAIFailureKind,
} from './retrieval/workers-ai-embeddings.ts'
export type {
  WorkersAIBinding,
  WorkersAIEmbeddingsOptions,
} from './retrieval/workers-ai-embeddings.ts'
export { RETRIEVAL_DEFAULTS } from './retrieval/retrieval-options.ts'
export { defaultSymbolExtractor, setDefaultSymbolExtractor } from './retrieval/symbol-extractor.ts'
export type { SymbolDefinition, SymbolExtractor } from './retrieval/symbol-extractor.ts'
export { treeSitterSymbols } from './retrieval/tree-sitter-symbols.ts'
export type {
  GrammarWasm,
  TreeSitterLibrary,
  TreeSitterWasm,
} from './retrieval/tree-sitter-symbols.ts'
export { TREE_SITTER_GRAMMARS, grammarOf } from './retrieval/symbol-queries.ts'
export type { TreeSitterGrammar } from './retrieval/symbol-queries.ts'
export type { RetrievalLimits, RetrievalOptions } from './retrieval/retrieval-options.ts'
export type { RetrievalPhase, RetrievalStatus } from './retrieval/retrieval-status.ts'

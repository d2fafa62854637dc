import { SNAPSHOT_SCHEMA, type JsonSchema } from '../../adapters/index.ts'

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })
export { ref as schemaRef }

const ERROR_KINDS = [
  'version_conflict',
  'not_found',
  'invalid_argument',
  'hook_denied',
  'permission_denied',
  'unsupported',
  'timeout',
  'transport',
  'cancelled',
  'partial_failure',
  'rate_limited',
  'retrieval_requirements_not_met',
]

const EVENT_TYPES = [
  'tool_state',
  'tool_start',
  'tool_output_delta',
  'tool_end',
  'confirmation_required',
  'permission_denied',
  'hook_denied',
  'hook_error',
  'budget_exhausted',
  'events_dropped',
]

const AGENT_EVENT_TYPES = [
  'step_start',
  'text_delta',
  'tool_call',
  'tool_output_delta',
  'tool_result',
  'step_end',
  'finish',
  'error',
]

const ORIGIN: JsonSchema = {
  type: 'string',
  enum: ['agent', 'nested', 'host_direct', 'host_direct_nested'],
}

/** The shared response schemas of the API (`components.schemas` of the OpenAPI document). */
export const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  Health: {
    type: 'object',
    required: ['ok', 'version', 'runtime'],
    properties: {
      ok: { const: true },
      version: { type: 'string' },
      runtime: { type: 'string', description: 'node, workerd, bun, deno, browser or unknown' },
    },
  },
  SessionCreated: {
    type: 'object',
    required: ['id', 'tools'],
    properties: { id: { type: 'string' }, tools: { type: 'array', items: { type: 'string' } } },
  },
  SessionInfo: {
    type: 'object',
    required: ['id', 'tools', 'activeTools'],
    properties: {
      id: { type: 'string' },
      tools: { type: 'array', items: { type: 'string' } },
      activeTools: { type: 'array', items: ref('ActiveTool') },
    },
  },
  ActiveTool: {
    type: 'object',
    required: ['id', 'name', 'origin', 'state', 'startedAt'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      origin: ORIGIN,
      state: { type: 'string' },
      startedAt: { type: 'number' },
      parentCallId: { type: 'string' },
    },
  },
  ToolDefinition: {
    type: 'object',
    required: ['name', 'description', 'parameters'],
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      parameters: { type: 'object', description: 'the closed JSON Schema of the arguments' },
    },
  },
  ToolResult: {
    type: 'object',
    required: ['name', 'output', 'exitCode'],
    properties: {
      name: { type: 'string' },
      output: { type: 'string' },
      exitCode: { type: 'integer', enum: [0, 1] },
      metadata: {
        type: 'object',
        additionalProperties: true,
        description: "the tool's metadata (fields per tool; see each tool's documentation)",
      },
      errorKind: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string', enum: ERROR_KINDS } },
      },
      metadataJson: { type: 'string' },
    },
  },
  PendingConfirmation: {
    type: 'object',
    required: ['id', 'callId', 'toolName', 'args', 'origin', 'requestedAt'],
    properties: {
      id: { type: 'string' },
      callId: { type: 'string' },
      toolName: { type: 'string' },
      args: {},
      origin: ORIGIN,
      requestedAt: { type: 'number' },
      reason: { type: 'string' },
    },
  },
  SessionEvent: {
    type: 'object',
    required: ['type', 'timestamp'],
    properties: {
      type: { type: 'string', enum: EVENT_TYPES },
      toolName: { type: 'string' },
      callId: { type: 'string' },
      origin: ORIGIN,
      timestamp: { type: 'number' },
    },
  },
  BackgroundTask: {
    type: 'object',
    required: ['id', 'description', 'agent', 'status', 'startedAt'],
    properties: {
      id: { type: 'string' },
      description: { type: 'string' },
      agent: { type: 'string', enum: ['explore', 'verification', 'general'] },
      status: { type: 'string', enum: ['running', 'completed', 'failed', 'cancelled'] },
      startedAt: { type: 'number' },
      endedAt: { type: 'number' },
      result: ref('ToolResult'),
    },
  },
  AgentEvent: {
    type: 'object',
    required: ['type'],
    description:
      'One event of an agent turn (`AgentEvent`); the stream ends with `finish`, or with `error` `{ type, error: { code, message } }`.',
    properties: {
      type: { type: 'string', enum: AGENT_EVENT_TYPES },
      step: { type: 'integer' },
      delta: { type: 'string' },
      toolCallId: { type: 'string' },
      toolName: { type: 'string' },
      args: {},
      exitCode: { type: 'integer', enum: [0, 1] },
      output: { type: 'string' },
      text: { type: 'string' },
      finishReason: { type: 'string' },
      usage: {
        type: 'object',
        properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' } },
      },
      error: {
        type: 'object',
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  Workflow: {
    type: 'object',
    required: ['run_id', 'status', 'running', 'last_sequence', 'steps'],
    properties: {
      run_id: { type: 'string' },
      status: {
        type: 'string',
        enum: ['running', 'completed', 'failed', 'cancelled', 'timed_out'],
      },
      running: { type: 'boolean', description: 'whether this session is driving the run now' },
      last_sequence: { type: 'integer' },
      source_hash: { type: 'string' },
      steps: {
        type: 'object',
        required: ['total', 'pending', 'completed', 'failed'],
        properties: {
          total: { type: 'integer' },
          pending: { type: 'integer' },
          completed: { type: 'integer' },
          failed: { type: 'integer' },
        },
      },
    },
  },
  WorkflowEvent: {
    type: 'object',
    required: ['type', 'sequence', 'at'],
    additionalProperties: true,
    properties: {
      type: {
        type: 'string',
        enum: [
          'run_created',
          'step_scheduled',
          'step_started',
          'step_completed',
          'step_failed',
          'run_completed',
          'run_failed',
          'run_cancelled',
          'run_timed_out',
        ],
      },
      sequence: { type: 'integer', minimum: 1 },
      at: { type: 'string' },
      step_id: { type: 'string' },
      attempt: { type: 'integer' },
    },
  },
  SessionSnapshot: {
    type: 'object',
    required: ['schema', 'workspace', 'tool_result_transform_policy', 'tools'],
    properties: {
      schema: { const: SNAPSHOT_SCHEMA },
      created_at: { type: 'string' },
      workspace: { type: 'object' },
      tool_result_transform_policy: { type: 'object' },
      permissions: { type: 'object' },
      budget: { type: 'object' },
      tool_timeout_ms: {},
      tools: { type: 'array', items: { type: 'string' } },
      conversation: {
        type: 'object',
        properties: { messages: { type: 'array', items: { type: 'object' } } },
      },
    },
  },
}

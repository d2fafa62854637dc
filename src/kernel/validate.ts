import * as generated from './validators.generated.ts'

interface AjvError {
  instancePath: string
  keyword: string
  params: Record<string, unknown>
  message?: string
}

type Validator = ((data: unknown) => boolean) & { errors?: AjvError[] | null }

const validators = generated as unknown as Record<string, Validator | undefined>

function where(instancePath: string): string {
  if (instancePath === '') return 'arguments'
  return instancePath
    .slice(1)
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('')
}

function describe(error: AjvError): string {
  const at = where(error.instancePath)
  switch (error.keyword) {
    case 'additionalProperties':
      return `${at}: unknown property "${String(error.params.additionalProperty)}"`
    case 'required':
      return `${at}: missing required property "${String(error.params.missingProperty)}"`
    case 'enum':
      return `${at} must be one of ${JSON.stringify(error.params.allowedValues)}`
    default:
      return `${at} ${error.message ?? 'is invalid'}`
  }
}

/**
 * Check `args` against the precompiled schema of built-in tool `name`. Returns a message a
 * caller can act on, or `undefined` when valid. Throws if no validator was generated.
 */
export function validateToolArgs(name: string, args: unknown): string | undefined {
  const validate = validators[name]
  if (validate === undefined)
    throw new Error(`no precompiled validator for tool ${name}; run npm run gen:validators`)
  if (validate(args)) return undefined
  const first = validate.errors?.[0]
  return first === undefined ? 'arguments are invalid' : describe(first)
}

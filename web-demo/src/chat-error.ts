/**
 * A chat turn that failed, with its typed code: the model's (`rate_limited`, `transport`,
 * `timeout`, `invalid_argument`), `cancelled` after Stop, or the server's refusal
 * (`model_not_configured`, `turn_in_progress`).
 */
export class ChatError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ChatError'
  }
}

/**
 * A session's budget of browser retries: `max` tokens to start with, one spent per retry, a
 * fraction of one earned back per successful search, so a failing browser is never hammered.
 */
export class RetryBudget {
  private tokens: number

  constructor(
    private readonly max = 3,
    private readonly earnPerSuccess = 0.25,
  ) {
    this.tokens = max
  }

  get remaining(): number {
    return Math.floor(this.tokens)
  }

  tryRetry(): boolean {
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  onSuccess(): void {
    this.tokens = Math.min(this.max, this.tokens + this.earnPerSuccess)
  }
}

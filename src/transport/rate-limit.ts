import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Requests per minute per remote address; `perMinute` 0 turns the limit off. */
export class RateLimit {
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(perMinute: number) {
    this.limiter = perMinute > 0 ? new RateLimiterMemory({ points: perMinute, duration: 60 }) : undefined;
  }

  /** Resolves true if the address may go on; false when it is over its limit. */
  async allow(address: string): Promise<boolean> {
    if (!this.limiter) return true;
    try {
      await this.limiter.consume(address);
      return true;
    } catch (error) {
      if (error instanceof RateLimiterRes) return false;
      throw error;
    }
  }
}

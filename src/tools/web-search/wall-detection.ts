const CAPTCHA =
  /\b(captcha|unusual traffic|are you a robot|not a robot|verify you are human|automated queries)\b/i
const CONSENT =
  /\b(before you continue|consent to (the use of )?cookies|accept all cookies|we value your privacy)\b/i

/** What a page's text says when it is a wall instead of results. */
export function detectWall(textSample: string): 'captcha' | 'consent' | undefined {
  if (CAPTCHA.test(textSample)) return 'captcha'
  if (CONSENT.test(textSample)) return 'consent'
  return undefined
}

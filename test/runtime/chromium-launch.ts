import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium, which `.ci/run` installs. */
export const CHROMIUM = '/usr/bin/chromium'
/** The failure shown when it is missing (the tests fail, never skip). */
export const MISSING_CHROMIUM = `Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does this)`

/** Launch headless Debian Chromium with flags that keep it off the (closed) network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  })
}

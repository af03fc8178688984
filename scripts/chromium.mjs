// How every test and bench here launches Chromium: Debian's build (or CHROMIUM_PATH), with the
// background networking that this machine's closed network would refuse switched off.
export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
}

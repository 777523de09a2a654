/** What a system.md without front matter sets: written out here, not taken from the code under test. */
export const DEFAULT_PROMPT_SETTINGS = {
  transferTargets: {},
  transfer: {},
  style: {},
  ssml: false,
  silence: { timeoutSeconds: 0, reprompts: 2 },
  keypad: { endKey: '#', pauseMs: 3000, maxDigits: 20 },
};

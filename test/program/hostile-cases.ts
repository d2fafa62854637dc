/** The four calls of issue 27: each loops natively for minutes to hours in QuickJS. */
export const HOSTILE = [
  'return Array.prototype.includes.call({ length: 2 ** 40 }, 1)',
  'return new Array(2 ** 32 - 1).indexOf(1)',
  'return new Array(2 ** 32 - 1).lastIndexOf(1)',
  "return new Array(1e9).join('x')",
] as const

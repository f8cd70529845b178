/** `n thing` / `n things` ("1 turn", never "1 turns"). */
export const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

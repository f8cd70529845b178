/**
 * The 1-based line of the first JSON syntax error. Bun's JSON.parse messages carry no position, so a
 * strict little recursive-descent checker finds it (only run on text that already failed to parse).
 */
export function jsonErrorLine(text: string): number {
  let i = 0;
  const lineAt = () => text.slice(0, i).split("\n").length;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const expect = (ok: boolean) => {
    if (!ok) throw lineAt();
  };
  const str = () => {
    expect(text[i] === '"');
    i++;
    while (i < text.length && text[i] !== '"') {
      expect(text[i] !== "\n");
      i += text[i] === "\\" ? 2 : 1;
    }
    expect(i < text.length);
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === "{") {
          ws();
          str();
          ws();
          expect(text[i] === ":");
          i++;
        }
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        expect(text[i] === close);
        i++;
        return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    expect(m !== null);
    i += m![0].length;
  };
  try {
    value();
    ws();
    expect(i === text.length);
  } catch (line) {
    if (typeof line === "number") return line;
    throw line;
  }
  return 1;
}

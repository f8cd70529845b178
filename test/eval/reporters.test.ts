import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { EvalReport } from "../../src/eval/report.ts";
import { ANNOTATION_LIMIT, renderGithub, renderStepSummary } from "../../src/eval/reporters/github.ts";
import { renderJunit } from "../../src/eval/reporters/junit.ts";
import { renderPretty } from "../../src/eval/reporters/pretty.ts";
import { renderTap } from "../../src/eval/reporters/tap.ts";
import { runEval } from "../../src/eval/runner.ts";
import { ROOT, tempDir } from "../_helpers.ts";

let report: EvalReport;
beforeAll(async () => {
  report = await runEval({
    cases: [join(ROOT, "examples", "cases")],
    sessions: join(ROOT, "examples", "rollouts"),
  });
});

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

/** A strict little XML parser: throws on anything malformed (unbalanced tags, bad entities). */
function parseXml(xml: string): XmlNode {
  const decode = (s: string) => {
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(s)) throw new Error(`bad entity in ${s}`);
    return s
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, "&");
  };
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, "");
  const root: XmlNode = { name: "#root", attrs: {}, children: [], text: "" };
  const stack = [root];
  const re = /<(\/?)([A-Za-z-]+)((?:\s+[a-z-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = re.exec(body))) {
    pos = re.lastIndex;
    const top = stack.at(-1)!;
    if (m[5] !== undefined) {
      top.text += decode(m[5]);
      continue;
    }
    if (m[1]) {
      if (top.name !== m[2]) throw new Error(`</${m[2]}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of m[3]!.matchAll(/([a-z-]+)="([^"]*)"/g)) attrs[a[1]!] = decode(a[2]!);
    const node: XmlNode = { name: m[2]!, attrs, children: [], text: "" };
    top.children.push(node);
    if (!m[4]) stack.push(node);
  }
  if (pos !== body.length || stack.length !== 1) throw new Error(`malformed XML at ${pos}`);
  return root.children[0]!;
}

describe("junit", () => {
  test("parses back; counts add up; failures carry their text in the body; names unique per suite", () => {
    const xml = parseXml(renderJunit(report));
    expect(xml.name).toBe("testsuites");
    const cases = xml.children.flatMap((s) => s.children);
    expect(Number(xml.attrs.tests)).toBe(cases.length);
    const failures = cases.filter((c) => c.children.some((x) => x.name === "failure"));
    expect(Number(xml.attrs.failures)).toBe(failures.length);
    expect(failures.length).toBeGreaterThanOrEqual(2);
    const hung = failures.find((c) => c.attrs.name === "hung-request › noHung")!;
    expect(hung.attrs.classname).toBe("demo-deliberate-failure");
    expect(hung.attrs.file).toBe("examples/cases/demo-failure.yaml");
    expect(hung.attrs.line).toBe("11");
    const body = hung.children[0]!.text;
    expect(body).toContain("1 hung model request");
    expect(body).toContain("session hung-request seq 8");
    for (const suite of xml.children) {
      const names = suite.children.map((c) => c.attrs.name);
      expect(new Set(names).size).toBe(names.length);
    }
    // A failure tolerated by passRate is not a <failure>: the case passed.
    const tolerated = cases.find((c) => c.attrs.name?.startsWith("fix-login-3 › expectBashMatches"))!;
    expect(tolerated.children.map((c) => c.name)).toEqual(["system-out"]);
  });
  test("could not evaluate is <error>, skipped is <skipped>; special characters are escaped", () => {
    const r = structuredClone(report);
    r.cases[0]!.id = "a<b>&\"c'";
    r.cases[0]!.sessions[0]!.error = "corrupt: line 3 <oops> & \u0001";
    r.cases[0]!.verdict = "error";
    r.cases[1]!.verdict = "skip";
    r.cases[1]!.skipReason = "flaky";
    const xml = parseXml(renderJunit(r));
    expect(xml.children[0]!.attrs.name).toBe("a<b>&\"c'");
    const err = xml.children[0]!.children.find((c) => c.children.some((x) => x.name === "error"))!;
    expect(err.children.find((x) => x.name === "error")!.text).toBe("corrupt: line 3 <oops> & ");
    expect(xml.children[1]!.children[0]!.children[0]).toMatchObject({
      name: "skipped",
      attrs: { message: "flaky" },
    });
    expect(Number(xml.attrs.errors)).toBeGreaterThanOrEqual(1);
  });
});

/** Parse TAP 14 back: plan, points, subtests (4-space indent) and YAML blocks (2 spaces under a point). */
function parseTap(text: string, indent = "") {
  const lines = text.split("\n").filter((l) => l.startsWith(indent) && l.length > indent.length);
  const points: {
    ok: boolean;
    n: number;
    desc: string;
    directive?: string;
    yaml?: unknown;
    sub?: ReturnType<typeof parseTap>;
  }[] = [];
  let plan: number | undefined;
  let sub: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.slice(indent.length);
    if (l.startsWith("TAP version")) {
      expect(l).toBe("TAP version 14");
      continue;
    }
    if (l.startsWith("    ") || l.startsWith("# Subtest")) {
      if (!l.startsWith("# Subtest")) sub.push(lines[i]!);
      continue;
    }
    const planM = /^1\.\.(\d+)$/.exec(l);
    if (planM) {
      plan = Number(planM[1]);
      continue;
    }
    const p = /^(not ok|ok) (\d+) - (.*?)(?: # (SKIP|TODO).*)?$/.exec(l);
    if (p) {
      const point: (typeof points)[number] = {
        ok: p[1] === "ok",
        n: Number(p[2]),
        desc: p[3]!,
        ...(p[4] ? { directive: p[4] } : {}),
      };
      if (sub.length) point.sub = parseTap(sub.join("\n"), `${indent}    `);
      sub = [];
      if (lines[i + 1]?.slice(indent.length) === "  ---") {
        const end = lines.findIndex((x, j) => j > i && x.slice(indent.length) === "  ...");
        point.yaml = Bun.YAML.parse(
          lines
            .slice(i + 2, end)
            .map((x) => x.slice(indent.length + 2))
            .join("\n"),
        );
        i = end;
      }
      points.push(point);
      continue;
    }
    throw new Error(`unexpected TAP line: ${JSON.stringify(l)}`);
  }
  return { plan, points };
}

describe("tap", () => {
  test("parses back as TAP 14: plans match, points numbered, YAML diagnostics on failures", () => {
    const tap = parseTap(renderTap(report));
    expect(tap.plan).toBe(report.cases.length);
    expect(tap.points.map((p) => p.n)).toEqual(report.cases.map((_, i) => i + 1));
    const failed = tap.points.find((p) => !p.ok)!;
    expect(failed.desc).toBe("demo-deliberate-failure");
    expect(failed.sub!.plan).toBe(failed.sub!.points.length);
    const hung = failed.sub!.points.find((p) => p.desc === "hung-request › noHung")!;
    expect(hung.ok).toBe(false);
    expect(hung.yaml).toMatchObject({
      severity: "fail",
      at: { file: "examples/cases/demo-failure.yaml", line: 11, session: "hung-request", seq: 8 },
      data: { expect: "every model request answered" },
    });
    const seqPoint = failed.sub!.points.find((p) => p.desc.includes("expectSequence"))!;
    expect(seqPoint.yaml).toMatchObject({
      at: { step: 1 },
      data: { expect: ["read", "edit"], got: ["read"] },
    });
  });
  test("# and \\ are escaped in descriptions; skips use the SKIP directive", () => {
    const r = structuredClone(report);
    r.cases[0]!.id = "a # b \\ c";
    r.cases[1]!.verdict = "skip";
    r.cases[1]!.skipReason = "later";
    const tap = parseTap(renderTap(r));
    expect(tap.points[0]!.desc).toBe("a \\# b \\\\ c");
    expect(tap.points[1]).toMatchObject({ ok: true, directive: "SKIP" });
  });
});

describe("github", () => {
  test("annotations point at the case file line, escaped; at most 10 per kind", () => {
    const out = renderGithub(report).trimEnd().split("\n");
    expect(out[0]).toMatch(
      /^::error file=examples\/cases\/demo-failure\.yaml,line=11,title=demo-deliberate-failure%3A noHung::1 hung model request/,
    );
    const many = structuredClone(report);
    const k = many.cases[0]!;
    k.sessions = Array.from({ length: 25 }, () => structuredClone(k.sessions[0]!));
    const lines = renderGithub(many).trimEnd().split("\n");
    expect(lines.filter((l) => l.startsWith("::error")).length).toBe(ANNOTATION_LIMIT);
    expect(lines.at(-1)).toMatch(/^::notice title=freecode eval::\d+ more failures not annotated/);
  });
  test("annotation paths are relative to $GITHUB_WORKSPACE (eval run from a subdirectory)", () => {
    // The report names files relative to where eval ran (here the repository root).
    const inWorkspace = renderGithub(report, resolve("examples")).split("\n")[0]!;
    expect(inWorkspace).toMatch(/^::error file=cases\/demo-failure\.yaml,line=11,/);
    const elsewhere = renderGithub(report, resolve("src")).split("\n")[0]!;
    expect(elsewhere).toMatch(/^::error file=examples\/cases\/demo-failure\.yaml,line=11,/);
    expect(renderGithub(report, "").split("\n")[0]).toMatch(
      /^::error file=examples\/cases\/demo-failure\.yaml,/,
    );
  });
  test("the step summary lists every case and every problem", () => {
    const md = renderStepSummary(report);
    expect(md).toContain("### freecode eval: 7 passed, 1 failed, 0 could not be evaluated");
    expect(md).toContain("| ❌ | demo-deliberate-failure |");
    expect(md).toContain("| demo-deliberate-failure | hung-request | noHung |");
  });
  test("regression: a case whose sessions passed but whose check over the selection could not be evaluated is not shown as passed in the step summary", async () => {
    await using dir = await tempDir();
    // A session whose log records no first-token time: the ttft bound has nothing to measure.
    mkdirSync(join(dir.path, "rollouts", "s1"), { recursive: true });
    const events = [
      { type: "session.started", projectPath: "/work/app", reason: "new" },
      { type: "turn.started", turnId: "turn-0" },
      { type: "model.request", turnId: "turn-0", provider: "anthropic", model: "m" },
      { type: "model.response", turnId: "turn-0", provider: "anthropic", model: "m" },
    ].map((e, i) =>
      JSON.stringify({ ...e, id: `e${i}`, seq: i + 1, aggregateID: "s1", timestamp: 1000 + i }),
    );
    writeFileSync(join(dir.path, "rollouts", "s1", "events.jsonl"), `${events.join("\n")}\n`);
    const file = join(dir.path, "w.yaml");
    writeFileSync(file, "id: w\nsessions: [s1]\nexpect: [{ttft: {max: 1}}]\n");
    const r = await runEval({ cases: [file], sessions: join(dir.path, "rollouts") });
    const w = r.cases[0]!;
    expect([w.verdict, w.counts.passed, w.counts.sessions]).toEqual(["error", 1, 1]);
    const md = renderStepSummary(r);
    expect(md).toContain("| ⚠️ | w | 1 session | ");
    expect(md).not.toContain("passed |");
  });
});

describe("pretty", () => {
  test("no colour unless asked; the failure explains itself", () => {
    const plain = renderPretty(report);
    expect(plain).not.toContain("\x1b[");
    expect(plain).toContain("at session hung-request · seq 8");
    expect(plain).toContain("strict: step 1 edit missing");
    expect(renderPretty(report, { color: true })).toContain("\x1b[31m✗\x1b[0m");
  });
  test("recorded text reaches the terminal escaped", () => {
    const hostile = structuredClone(report);
    const failing = hostile.cases.flatMap((k) => k.sessions).find((s) => s.verdict === "fail")!;
    failing.checks.find((ch) => ch.verdict === "fail")!.message = "said:\nok 1 - fake\x1b]0;pwned\x07";
    failing.error = "boom\x1b[2J";
    const text = renderPretty(hostile);
    expect(text).not.toContain("\x1b");
    expect(text).toContain("said:\\nok 1 - fake\\x1b]0;pwned\\x07");
    expect(text).toContain("boom\\x1b[2J");
  });
});

test("regression: a failure passRate tolerates is shown as tolerated by every reporter, also beside a check that could not be evaluated (there it was a JUnit <failure>, a TAP not ok, a github ::error, and pretty did not say tolerated)", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "c.yaml");
  writeFileSync(
    file,
    "id: tol\nsessions: [fix-login-1, fix-login-2, fix-login-3]\npassRate: 0.5\npassK: {k: 4, min: 0.1}\nexpect:\n  - expectBashMatches: [npm test]\n",
  );
  const r = await runEval({ cases: [file], sessions: join(ROOT, "examples", "rollouts") });
  expect(r.exitCode).toBe(2);
  const suite = parseXml(renderJunit(r)).children[0]!;
  const failed = suite.children.find((c) => c.attrs.name?.startsWith("fix-login-3 › "))!;
  expect(failed.children.map((c) => [c.name, c.text.split("\n")[0]])).toEqual([
    ["system-out", "failed, tolerated by passRate:"],
  ]);
  expect(suite.attrs).toMatchObject({ failures: "0", errors: "1" });
  expect(renderPretty(r)).toContain("✗ fix-login-3 (tolerated by passRate)\n");
  expect(renderTap(r)).toContain(
    'ok 3 - fix-login-3 › expectBashMatches ["npm test"] (failed, tolerated by passRate)',
  );
  expect(renderGithub(r, undefined).split("\n").filter(Boolean)).toEqual([
    expect.stringMatching(/^::warning .*pass\^4/),
  ]);
});

test("regression: pretty gives a session id no log has its own line of the case file, as the other reporters do (it printed the id with no location)", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "ids.yaml");
  writeFileSync(file, "id: gone\nsessions:\n  - fix-login-1\n  - nosuch-id\nexpect:\n  - noHung: true\n");
  const r = await runEval({ cases: [file], sessions: join(ROOT, "examples", "rollouts") });
  expect(renderPretty(r)).toContain(
    `\n    ! nosuch-id  ${file}:4\n        could not evaluate: no rollout log for session nosuch-id\n`,
  );
  expect(renderPretty(r, { color: true })).toContain(` nosuch-id  \x1b[90m${file}:4\x1b[0m\n`);
});

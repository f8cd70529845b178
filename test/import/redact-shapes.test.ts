/**
 * `--redact` on two shapes it did not recognise: a hash's `=>` (PHP, Ruby, Perl) and a subscript's
 * `]` between a secret's name and its value, and argument vectors, where a password is an item
 * after its option or command word (`["mysql", "-uroot", "-phunter22"]`). With them, code those
 * shapes are common in stays: Laravel's validation rules, static calls, member accesses.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import { redactDeep, redactText } from "../../src/import/redact.ts";
import { openStore } from "../../src/storage/select.ts";
import { tempDir, tempHome } from "../_helpers.ts";

const M = "[REDACTED]";

/** `input` redacts to `expected` as it is and JSON-encoded once and twice. */
function expectRedacted(input: string, expected: string): void {
  expect(redactText(input)).toBe(expected);
  const once = JSON.stringify({ out: input, more: 1 });
  expect(JSON.parse(redactText(once))).toEqual({ out: expected, more: 1 });
  expect(JSON.parse(JSON.parse(redactText(JSON.stringify(once))))).toEqual({ out: expected, more: 1 });
}

describe("redactText: a hash's => and a subscript", () => {
  test.each([
    ["PHP array pair", "'password' => 'hunter22x',", `'password' => '${M}',`],
    ["Ruby symbol pair", ':password => "Sup3rSecret"', `:password => "${M}"`],
    ["bare name", "api_key => abcd1234efgh5678", `api_key => ${M}`],
    ["Perl hash, several words", "DB_PASS => 'correct horse battery'", `DB_PASS => '${M}'`],
    ["PHP subscript", "$config['db_password'] = 'hunter22x';", `$config['db_password'] = '${M}';`],
    ["Python environ", 'os.environ["API_TOKEN"] = "abc123def456ghi"', `os.environ["API_TOKEN"] = "${M}"`],
    ["list after =>", "'passwords' => ['hunter22x', 's3cr3tPass']", `'passwords' => ['${M}', '${M}']`],
  ])("%s", (_name, input, expected) => expectRedacted(input, expected));

  test.each([
    ["Laravel rules", "'password' => 'required|string|min:8|confirmed',"],
    ["Laravel rules, two", "'password' => 'required|min:8'"],
    ["rules after a colon", "password: 'required|min:8'"],
    ["a static call after =", "password = Hash::make($request->password),"],
    ["static call", "'password' => Hash::make($request->password),"],
    ["method on a member", "$user->password = $this->hasher->make($pw);"],
    ["scoped constant", "password = Config::DB_PASSWORD"],
    ["member access", "'token' => $this->token,"],
    ["a call", "'password' => bcrypt('secret'),"],
    ["an environment lookup", "'password' => env('DB_PASSWORD'),"],
    ["a variable", "token => $token"],
    ["a letters-only word", "password => 'secret'"],
    ["a Markdown link label", "[password]: https://example.com/reset"],
    ["a plain arrow", "x => y"],
  ])("%s stays", (_name, input) => expectRedacted(input, input));
});

describe("redactDeep: argument vectors", () => {
  test.each([
    ["mysql -p", ["mysql", "-h", "db", "-u", "root", "-pS3cretPass", "shop"], 5, `-p${M}`],
    ["mysql -p with shell characters", ["mysql", "-uroot", "-pP@ss;word!", "db"], 2, `-p${M}`],
    ["mysql after docker exec", ["docker", "exec", "db", "mysql", "-uroot", "-phunter22"], 5, `-p${M}`],
    ["mariadb-dump by its path", ["/usr/bin/mariadb-dump", "-phunter22", "db"], 1, `-p${M}`],
    ["curl -u", ["curl", "-s", "-u", "admin:Sup3rS3cret", "https://x"], 3, `admin:${M}`],
    ["curl --user, a space in it", ["curl", "--user", "me:p w0rd", "x"], 2, `me:${M}`],
    ["--password", ["app", "--password", "hunter22x"], 2, M],
    ["--token, several words", ["app", "--token", "a b c 9d"], 2, M],
    ["docker login -p", ["docker", "login", "-u", "me", "-p", "hunter22x"], 5, M],
    ["sshpass -p", ["sshpass", "-p", "hunter22x", "ssh", "host"], 2, M],
  ])("%s", (_name, argv, at, masked) => {
    const want = [...argv];
    want[at] = masked;
    expect(redactDeep(argv)).toEqual(want);
    expect(redactDeep({ command: argv })).toEqual({ command: want });
  });

  test.each([
    ["mysql -p asks", ["mysql", "-p", "shop"]],
    ["docker -p publishes", ["docker", "run", "-p", "3306:3306", "mysql"]],
    ["ls -p", ["ls", "-p", "dir"]],
    ["a -p with no command", ["-p", "hunter22x"]],
    ["prose after --token", ["app", "--token", "instead"]],
    ["a placeholder", ["app", "--api-key", "API_KEY"]],
    ["a variable", ["app", "--password", "$DB_PASSWORD"]],
    ["curl -u with a variable", ["curl", "-u", "me:$PASS", "x"]],
    ["numbers", [1, 2, 3]],
  ])("%s stays", (_name, argv) => {
    expect(redactDeep(argv)).toEqual(argv);
  });

  test("an item masked on its own stays masked, and its neighbours as they were", () => {
    expect(redactDeep(["bash", "-lc", "mysql -uroot -phunter22 db"])).toEqual([
      "bash",
      "-lc",
      `mysql -uroot -p${M} db`,
    ]);
  });
});

test("an import with --redact masks a Codex call's argument vector", async () => {
  const id = "019b64e5-57fa-7463-b644-fba7e456f905";
  const ts = "2025-12-28T12:18:30.533Z";
  const line = (type: string, payload: object) => JSON.stringify({ timestamp: ts, type, payload });
  const argv = ["mysql", "-uroot", "-phunter22", "shop"];
  await using dir = await tempDir();
  const path = join(dir.path, `rollout-2025-12-28T12-18-30-${id}.jsonl`);
  writeFileSync(
    path,
    `${[
      line("session_meta", {
        id,
        timestamp: ts,
        cwd: "/w",
        originator: "codex_cli_rs",
        cli_version: "0.77.0",
      }),
      line("event_msg", { type: "user_message", message: "count the orders", images: [] }),
      line("response_item", {
        type: "function_call",
        name: "shell",
        arguments: JSON.stringify({ command: argv }),
        call_id: "c1",
      }),
      line("response_item", { type: "function_call_output", call_id: "c1", output: "42" }),
    ].join("\n")}\n`,
  );
  await using home = await tempHome();
  const { adapter } = await openStore("files", { home: home.path });
  try {
    await importSources({ agent: "codex", paths: [path], adapter, home: home.path, redact: true });
    const stored = JSON.stringify([
      await adapter.readMessages(`codex-${id}`),
      await Array.fromAsync(adapter.readEvents(`codex-${id}`)),
    ]);
    expect(stored).not.toContain("hunter22");
    expect(stored).toContain(`"-p${M}"`);
  } finally {
    await adapter.close();
  }
});

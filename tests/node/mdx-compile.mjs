// One long-lived MDX 3 compiler for the tests: reads one JSON string (a Markdown page) per line on stdin,
// answers one JSON line per page: {"ok": true} or {"ok": false, "error": "..."}. Docusaurus compiles .md
// docs as MDX with GitHub-flavoured Markdown (tables), so remark-gfm is on, as there.
import { compile } from "@mdx-js/mdx";
import remarkGfm from "remark-gfm";
import readline from "node:readline";

const lines = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of lines) {
  let reply;
  try {
    await compile(JSON.parse(line), { remarkPlugins: [remarkGfm] });
    reply = { ok: true };
  } catch (error) {
    reply = { ok: false, error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}

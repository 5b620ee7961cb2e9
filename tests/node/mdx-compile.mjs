// One long-lived MDX 3 compiler for the tests: reads one JSON string (a Markdown page) per line on stdin and
// answers one JSON line per page: {"ok": true, "live": [...]} or {"ok": false, "error": "..."}. "live" lists
// what MDX would run rather than show: JSX elements (by name), {expressions} and import/export. Docusaurus
// compiles .md docs as MDX with GitHub-flavoured Markdown (tables), so remark-gfm is on, as there.
import { compile } from "@mdx-js/mdx";
import remarkGfm from "remark-gfm";
import readline from "node:readline";

const LIVE = new Set(["mdxJsxFlowElement", "mdxJsxTextElement", "mdxFlowExpression", "mdxTextExpression", "mdxjsEsm"]);
let live = [];
function collect() {
  return (tree) => {
    const walk = (node) => {
      if (LIVE.has(node.type)) { live.push(node.name ? `${node.type} <${node.name}>` : node.type); }
      (node.children || []).forEach(walk);
    };
    walk(tree);
  };
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of lines) {
  let reply;
  live = [];
  try {
    await compile(JSON.parse(line), { remarkPlugins: [remarkGfm, collect] });
    reply = { ok: true, live };
  } catch (error) {
    reply = { ok: false, error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}

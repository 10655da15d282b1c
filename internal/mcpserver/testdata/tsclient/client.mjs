// Drives phc's MCP server with the official TypeScript SDK client and prints
// what it saw as one JSON document. Usage:
//   node client.mjs http URL TOKEN CALLS.json
//   node client.mjs stdio COMMAND ARGS... -- CALLS.json   (PHC_TOKEN in the environment)
// CALLS.json: [{"name": tool, "arguments": {...}}, ...]; an entry {"wait": LABEL} writes "WAIT LABEL" on
// standard error and waits for a line on standard input (the test changes the daemon meanwhile). A call that
// throws is recorded with "thrown". With ONLY_CALLS=1 in the environment, the listings after the calls are left out.
// With LOG_MESSAGES=FILE, every MCP message sent and received is appended to FILE, one JSON line each; with
// CLIENT_VAULT=VALUE (http mode), every request carries the header Client-Vault: VALUE. With ELICIT=accept or
// ELICIT=decline, the client is a host that supports elicitation and answers every one so (accept: {"approve": true});
// the messages it was asked are in "elicited".
import { appendFileSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
let transport, callsFile;
if (mode === "http") {
  const [url, token, file] = rest;
  callsFile = file;
  const headers = { Authorization: `Bearer ${token}` };
  if (process.env.CLIENT_VAULT) headers["Client-Vault"] = process.env.CLIENT_VAULT;
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
} else {
  const cut = rest.indexOf("--");
  const [command, ...args] = rest.slice(0, cut);
  callsFile = rest[cut + 1];
  transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
}
// logged wraps a transport so that every message it carries, both ways, is appended to file.
function logged(inner, file) {
  const log = (dir, m) => appendFileSync(file, JSON.stringify({ dir, message: m }) + "\n");
  const w = {
    start: () => inner.start(),
    send: (m, o) => { log("sent", m); return inner.send(m, o); },
    close: () => inner.close(),
    get sessionId() { return inner.sessionId; },
    setProtocolVersion: (v) => inner.setProtocolVersion?.(v),
  };
  inner.onmessage = (m, extra) => { log("received", m); w.onmessage?.(m, extra); };
  inner.onerror = (e) => w.onerror?.(e);
  inner.onclose = () => w.onclose?.();
  return w;
}
if (process.env.LOG_MESSAGES) transport = logged(transport, process.env.LOG_MESSAGES);
const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const elicit = process.env.ELICIT;
const client = new Client({ name: "phc-ts-test", version: "1.0.0" }, elicit ? { capabilities: { elicitation: {} } } : undefined);
const out = { tools: [], calls: [], resources: null, prompts: [], prompt: null, elicited: [] };
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.elicited.push(req.params.message);
    return elicit === "accept" ? { action: "accept", content: { approve: true } } : { action: elicit };
  });
}
try {
  await client.connect(transport);
  const tools = await client.listTools(); // validates every tool definition
  out.tools = tools.tools.map((t) => t.name);
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  for (const c of calls) {
    if (c.wait) {
      process.stderr.write(`WAIT ${c.wait}\n`);
      await lines.next();
      continue;
    }
    try {
      // callTool checks structuredContent against the tool's output schema.
      const r = await client.callTool({ name: c.name, arguments: c.arguments });
      out.calls.push({ name: c.name, isError: !!r.isError, structured: r.structuredContent ?? null });
    } catch (e) {
      out.calls.push({ name: c.name, isError: true, structured: null, thrown: String(e && e.message ? e.message : e) });
    }
  }
  if (process.env.ONLY_CALLS === "1") {
    await client.close().catch(() => {});
    process.stdout.write(JSON.stringify(out) + "\n");
    process.exit(0);
  }
  const templates = await client.listResourceTemplates();
  out.resources = templates.resourceTemplates.map((t) => t.uriTemplate);
  const prompts = await client.listPrompts();
  out.prompts = prompts.prompts.map((p) => p.name);
  const p = await client.getPrompt({ name: "form-fill", arguments: { details: "a form" } });
  out.prompt = p.messages.length;
} catch (e) {
  out.error = String(e && e.message ? e.message : e);
}
await client.close().catch(() => {});
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(out.error ? 1 : 0);

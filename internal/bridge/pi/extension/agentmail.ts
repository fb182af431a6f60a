// AgentMail extension for pi, supplied by the AgentMail bridge (`agentmail bridge --platform pi`).
// The bridge starts pi as `pi --mode rpc --no-extensions -e <this file>`, so this is the only
// extension loaded (seed 000, 9.12). It does two things:
//
// 1. AgentMail tools (C-6). It starts the AgentMail MCP tool server (the argv in
//    AGENTMAIL_PI_MCP, a JSON array), lists its tools and registers each one with pi under the
//    same name. A call is forwarded as MCP tools/call. The server's environment is read from the
//    JSON file named by AGENTMAIL_PI_TOOLENV before every call; when the bridge wrote a new one
//    for a new turn, the server is restarted with it, so each turn's session and mail reach the
//    tools.
//
// 2. Permission questions (C-8, C-9). pi asks nobody before a tool runs. For the guarded tools
//    (AGENTMAIL_PI_GUARDED, default bash,write,edit) the tool_call handler sends the question to
//    the bridge over pi's RPC extension UI channel (an `input` dialog titled
//    "agentmail.permission" whose placeholder is the JSON {toolName, toolCallId, input}) and
//    waits for the answer, the JSON {allow, message}. Anything else (no answer, no UI, the run
//    aborted, text that is not that JSON) blocks the tool: the bridge drives mail, so it fails
//    closed (B-9.2).
//
// Logs go to stderr; stdout is pi's RPC channel.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";

const PERMISSION_TITLE = "agentmail.permission";
const GUARDED = (process.env.AGENTMAIL_PI_GUARDED ?? "bash,write,edit")
  .split(",")
  .map((s) => s.trim())
  .filter((s) => s.length > 0);
const DENIED = "A person denied this action by mail.";
const UNREACHABLE =
  "Refused: the AgentMail bridge could not be asked for permission, so this guarded tool does not run (fail closed).";

function log(msg: string): void {
  process.stderr.write(`agentmail extension: ${msg}\n`);
}

function mcpArgv(): string[] {
  const raw = process.env.AGENTMAIL_PI_MCP ?? "";
  if (raw === "") return [];
  try {
    const v = JSON.parse(raw);
    if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string")) return v;
  } catch {
    // reported below
  }
  log(`AGENTMAIL_PI_MCP is not a JSON array of strings: ${raw}`);
  return [];
}

// readToolEnv returns the raw text and the parsed variables of the tool environment file.
function readToolEnv(): { raw: string; vars: Record<string, string> } {
  const file = process.env.AGENTMAIL_PI_TOOLENV ?? "";
  if (file === "") return { raw: "", vars: {} };
  try {
    const raw = readFileSync(file, "utf8");
    const parsed = JSON.parse(raw);
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed ?? {})) {
      if (typeof v === "string") vars[k] = v;
    }
    return { raw, vars };
  } catch (e) {
    log(`cannot read the tool environment ${file}: ${String(e)}`);
    return { raw: "", vars: {} };
  }
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void };

// McpClient speaks newline-delimited JSON-RPC with one MCP server process.
class McpClient {
  private proc: ChildProcessWithoutNullStreams;
  private buf = "";
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private exited = false;
  readonly envRaw: string;

  constructor(argv: string[], envRaw: string, vars: Record<string, string>) {
    this.envRaw = envRaw;
    const env: Record<string, string | undefined> = { ...process.env, ...vars };
    delete env.AGENTMAIL_PI_MCP;
    delete env.AGENTMAIL_PI_TOOLENV;
    this.proc = spawn(argv[0], argv.slice(1), { env, stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stdout.setEncoding("utf8");
    this.proc.stdout.on("data", (chunk: string) => this.onData(chunk));
    this.proc.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    this.proc.stdin.on("error", (e) => this.onExit(`stdin failed: ${String(e)}`));
    this.proc.on("error", (e) => this.onExit(`cannot start: ${String(e)}`));
    this.proc.on("exit", (code, signal) => this.onExit(`exited (code ${code}, signal ${signal})`));
  }

  get alive(): boolean {
    return !this.exited;
  }

  private onExit(why: string): void {
    if (this.exited) return;
    this.exited = true;
    for (const p of this.pending.values()) p.reject(new Error(`AgentMail tool server ${why}`));
    this.pending.clear();
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (line === "") continue;
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        log(`tool server wrote a line that is not JSON: ${line.slice(0, 200)}`);
        continue;
      }
      if (msg.id === undefined || msg.id === null) continue; // a notification
      const p = this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`AgentMail tool server error ${msg.error.code}: ${msg.error.message}`));
      else p.resolve(msg.result);
    }
  }

  request(method: string, params: unknown): Promise<any> {
    if (this.exited) return Promise.reject(new Error("AgentMail tool server is not running"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.exited) this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
  }

  async initialize(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "agentmail-pi-extension", version: "1" },
    });
    this.notify("notifications/initialized", {});
  }

  stop(): void {
    if (!this.exited) this.proc.kill("SIGTERM");
  }
}

let client: McpClient | undefined;
let starting: Promise<McpClient> | undefined;

// toolServer returns a running tool server started with the current tool environment,
// restarting it when the bridge wrote a new environment.
async function toolServer(argv: string[]): Promise<McpClient> {
  if (starting) await starting.catch(() => undefined);
  const { raw, vars } = readToolEnv();
  if (client && client.alive && client.envRaw === raw) return client;
  if (client) client.stop();
  const c = new McpClient(argv, raw, vars);
  client = c;
  starting = c.initialize().then(() => c);
  return starting;
}

function resultText(result: any): string {
  const parts: string[] = [];
  for (const item of result?.content ?? []) {
    if (item?.type === "text" && typeof item.text === "string") parts.push(item.text);
    else parts.push(JSON.stringify(item));
  }
  return parts.join("\n");
}

export default async function agentmail(pi: any): Promise<void> {
  const argv = mcpArgv();
  if (argv.length > 0) {
    try {
      const c = await toolServer(argv);
      const listed = await c.request("tools/list", {});
      for (const tool of listed?.tools ?? []) {
        const name: string = tool.name;
        pi.registerTool({
          name,
          label: name,
          description: tool.description ?? name,
          parameters: tool.inputSchema ?? { type: "object", properties: {} },
          async execute(_toolCallId: string, params: unknown) {
            const server = await toolServer(argv);
            const result = await server.request("tools/call", { name, arguments: params ?? {} });
            const text = resultText(result);
            if (result?.isError) throw new Error(text || `${name} failed`);
            return { content: [{ type: "text", text }], details: {} };
          },
        });
      }
      log(`registered ${(listed?.tools ?? []).length} AgentMail tools`);
    } catch (e) {
      log(`the AgentMail tools are not available: ${String(e)}`);
    }
  }

  pi.on("tool_call", async (event: any, ctx: any) => {
    if (!GUARDED.includes(event.toolName)) return undefined;
    if (!ctx?.hasUI || !ctx.ui?.input) return { block: true, reason: UNREACHABLE };
    const question = JSON.stringify({ toolName: event.toolName, toolCallId: event.toolCallId, input: event.input });
    let answer: unknown;
    try {
      answer = await ctx.ui.input(PERMISSION_TITLE, question, { signal: ctx.signal });
    } catch (e) {
      log(`permission question failed: ${String(e)}`);
      return { block: true, reason: UNREACHABLE };
    }
    if (typeof answer !== "string") return { block: true, reason: UNREACHABLE };
    let decision: any;
    try {
      decision = JSON.parse(answer);
    } catch {
      return { block: true, reason: UNREACHABLE };
    }
    if (decision?.allow === true) return undefined;
    const note = typeof decision?.message === "string" && decision.message.trim() !== "" ? decision.message : DENIED;
    return { block: true, reason: note };
  });

  pi.on("session_shutdown", async () => {
    if (client) client.stop();
  });
}

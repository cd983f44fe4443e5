// run.mjs runs one browser scenario for a Go test (package
// internal/browsertest): it launches headless Chromium through
// playwright-core, opens a page, records every request the page makes, and
// calls the scenario module's default export with a context:
//
//   export default async function (ctx) {
//     await ctx.page.goto(ctx.url);
//     await ctx.shot("first");                 // var/screenshots/<test>/01-first.png
//     const reply = await ctx.ask("kill", {});  // the Go test's Ask answers
//     return { anything: "the Go test reads as Result.Data" };
//   }
//
// ctx: page, context, browser (playwright-core objects), url, params (the Go
// test's Options.Params), shot(name), ask(name, data), log(...args).
//
// Protocol with the Go side: input in $PORTICO_BROWSER_INPUT (JSON: url,
// params, shots, timeoutMs, chromium); one JSON object a line on stdout:
// {"ask":name,"data":...} (answered by one line on stdin: {"reply":...} or
// {"error":"..."}), and last {"result":{...}} or {"error":"...","result":{...}}.
// Everything else (logs) goes to stderr.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";
import readline from "node:readline";

const modules = process.env.PORTICO_BROWSER_MODULES;
const require = createRequire(path.join(modules, "noop.js"));
const { chromium } = require("playwright-core");

const input = JSON.parse(process.env.PORTICO_BROWSER_INPUT || "{}");
const scenario = process.argv[2];

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const log = (...args) => console.error(...args);

// Replies to ask() arrive one line each, in order.
const lines = readline.createInterface({ input: process.stdin });
const waiting = [];
lines.on("line", (line) => {
  const w = waiting.shift();
  if (w) w(JSON.parse(line));
});
function ask(name, data) {
  return new Promise((resolve, reject) => {
    waiting.push((msg) => (msg.error ? reject(new Error(`ask ${name}: ${msg.error}`)) : resolve(msg.reply)));
    emit({ ask: name, data: data ?? null });
  });
}

const out = { requests: [], console: [], pageErrors: [], screenshots: [] };
let shots = 0;

async function main() {
  const browser = await chromium.launch({
    executablePath: input.chromium,
    headless: true,
    // --no-sandbox: tests run as root in CI, where Chromium's sandbox
    // refuses to start; the rest keep Chromium from calling home (a
    // closed network refuses those calls, slowly).
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-quic",
      "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(input.timeoutMs || 15000);
    const pending = [];
    context.on("requestfinished", (req) => pending.push((async () => {
      const res = await req.response();
      let sizes = { responseBodySize: 0, responseHeadersSize: 0 };
      try { sizes = await req.sizes(); } catch { /* closed page */ }
      out.requests.push({
        url: req.url(), method: req.method(), resourceType: req.resourceType(),
        status: res ? res.status() : 0,
        // bytes transferred: headers plus the body as sent (compressed
        // when the server compressed it)
        bytes: Math.max(0, sizes.responseBodySize) + Math.max(0, sizes.responseHeadersSize),
      });
    })()));
    context.on("requestfailed", (req) => {
      out.requests.push({
        url: req.url(), method: req.method(), resourceType: req.resourceType(),
        status: 0, bytes: 0, failure: req.failure()?.errorText || "failed",
      });
    });
    const page = await context.newPage();
    page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => out.pageErrors.push(String(e)));
    const shot = async (name) => {
      shots++;
      const file = path.join(input.shots, `${String(shots).padStart(2, "0")}-${name.replace(/[^A-Za-z0-9_.-]+/g, "-")}.png`);
      await page.screenshot({ path: file, fullPage: false });
      out.screenshots.push(file);
      return file;
    };
    const mod = await import(pathToFileURL(scenario).href);
    try {
      out.data = (await mod.default({ page, context, browser, url: input.url, params: input.params, shot, ask, log })) ?? null;
    } catch (err) {
      await shot("failure").catch(() => {});
      throw err;
    } finally {
      await Promise.allSettled(pending);
    }
    await context.close();
  } finally {
    await browser.close();
  }
}

main().then(
  () => { emit({ result: out }); process.exit(0); },
  (err) => { emit({ error: String(err?.stack || err), result: out }); process.exit(1); },
);

// Portico's client flow with the TypeScript client that openapi-typescript
// generated into ./schema.d.ts from the edge's /openapi.json, called through
// openapi-fetch: list the inventory, create an order with an Idempotency-Key,
// replay it, read it, cancel it, and decode a 404 and a 422 problem into the
// typed Problem. internal/e2e TestClients generates the types, compiles this
// file with tsc (a flow that no longer type-checks against the document is a
// failure too) and runs it with node against a real `portico dev`:
//
//   node out/flow.js BASE_URL IDEMPOTENCY_KEY
//
// It prints one line per step and exits 1 at the first step that fails.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Order = components["schemas"]["Order"];
type Problem = components["schemas"]["Problem"];

// node's process, declared here so the flow needs no @types/node.
declare const process: { argv: string[]; exitCode?: number };

const [base, key] = process.argv.slice(2);
if (!base || !key) {
  throw new Error("usage: node out/flow.js BASE_URL IDEMPOTENCY_KEY");
}

const client = createClient<paths>({
  baseUrl: base,
  headers: { Authorization: "Bearer demo-alice-token" }, // portico dev's demo customer alice
  signal: AbortSignal.timeout(30_000),
});

const orderBody = (paymentMethod: string) => ({
  lines: [{ sku: "keyboard-001", quantity: 1 }],
  paymentMethod,
});

function check(cond: boolean, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

// problem checks the typed problem's members against what the edge must have sent.
function problem(p: Problem | undefined, status: number, code: string, instance: string): string {
  check(
    p !== undefined && p.status === status && p.code === code && p.instance === instance && !!p.traceId && !!p.type && !!p.title,
    `problem ${JSON.stringify(p)}, want status ${status} code ${code} instance ${instance} with type, title and traceId`,
  );
  return `Problem{status: ${p.status}, code: ${p.code}, traceId: ${p.traceId}}`;
}

async function createOrder(idempotencyKey: string, paymentMethod: string) {
  return client.POST("/api/orders", {
    params: { header: { "Idempotency-Key": idempotencyKey } },
    body: orderBody(paymentMethod),
  });
}

let order: Order | undefined;
const steps: [string, () => Promise<string>][] = [
  ["listItems", async () => {
    const { data, response } = await client.GET("/api/inventory", { params: { query: {} } });
    check(response.status === 200 && data !== undefined, `status ${response.status}`);
    const items = data.items ?? [];
    check(items.some((it) => it.sku === "keyboard-001"), `keyboard-001 not listed: ${JSON.stringify(data)}`);
    return `${items.length} items, keyboard-001 among them`;
  }],
  ["createOrder", async () => {
    const { data, error, response } = await createOrder(key, "pm_card_ok");
    check(response.status === 201 && data?.id !== undefined, `status ${response.status}: ${JSON.stringify(error)}`);
    check(data.status === "CONFIRMED", `status ${data.status}, want CONFIRMED`);
    check(response.headers.get("Location") === `/api/orders/${data.id}`, `Location ${response.headers.get("Location")}`);
    check(response.headers.get("Idempotent-Replayed") === null, "first answer has Idempotent-Replayed");
    order = data;
    return `201 ${data.id} CONFIRMED`;
  }],
  ["createOrder replayed", async () => {
    const { data, response } = await createOrder(key, "pm_card_ok");
    check(response.status === 201 && data !== undefined, `status ${response.status}`);
    check(response.headers.get("Idempotent-Replayed") === "true", `Idempotent-Replayed ${response.headers.get("Idempotent-Replayed")}, want true`);
    check(data.id === order?.id, `replay answered order ${data.id}, want ${order?.id}`);
    return `Idempotent-Replayed: true, same order ${data.id}`;
  }],
  ["getOrder", async () => {
    const id = order?.id ?? "";
    const { data, response } = await client.GET("/api/orders/{id}", { params: { path: { id } } });
    check(response.status === 200 && data?.id === id && data.status === "CONFIRMED", `status ${response.status}: ${JSON.stringify(data)}`);
    return `${id} CONFIRMED`;
  }],
  ["cancelOrder", async () => {
    const id = order?.id ?? "";
    // The document's body is the whole CancelOrderRequest, id included (the path's wins).
    const { data, response } = await client.POST("/api/orders/{id}:cancel", { params: { path: { id } }, body: {} });
    check(response.status === 200 && data?.status === "CANCELLED", `status ${response.status}: ${JSON.stringify(data)}`);
    return `${id} CANCELLED`;
  }],
  ["getOrder 404 problem", async () => {
    const { error, response } = await client.GET("/api/orders/{id}", { params: { path: { id: "ord-missing" } } });
    check(response.status === 404, `status ${response.status}`);
    return problem(error, 404, "ORDER_NOT_FOUND", "/api/orders/ord-missing");
  }],
  ["createOrder 422 problem", async () => {
    const { error, response } = await createOrder(`${key}-declined`, "pm_card_declined");
    check(response.status === 422, `status ${response.status}`);
    return problem(error, 422, "PAYMENT_DECLINED", "/api/orders");
  }],
];

for (const [name, step] of steps) {
  try {
    console.log(`ok ${name}: ${await step()}`);
  } catch (e) {
    console.error(`FAIL: ${name}: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
    break;
  }
}

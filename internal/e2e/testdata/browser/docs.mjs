// The /docs scenario of TestDocsInBrowser: the API reference renders the
// edge's operations, takes a token in Authorize, and "Try it out" sends
// GET /api/inventory to the edge, whose 200 the page shows. Each state is
// a screenshot. ctx.params.token is the token to type.
export default async function (ctx) {
  const { page } = ctx;
  // The page's own HTML, then Swagger UI's operations: the wait that
  // matters is for the rendered operations, not the load event.
  await page.goto(ctx.url, { waitUntil: "domcontentloaded" });
  await page.locator(".opblock").first().waitFor();
  const operations = await page.locator(".opblock").count();
  const problemLinks = await page.locator('a[href$="problems"]').count();
  await ctx.shot("rendered");

  // Authorize: the bearer scheme's value, then Authorize and Close.
  await page.locator("button.authorize").first().click();
  const dialog = page.locator(".modal-ux");
  await dialog.waitFor();
  const bearer = dialog.locator(".auth-container").filter({ hasText: "bearer" }).first();
  await bearer.locator("input").first().fill(ctx.params.token);
  await ctx.shot("token-typed");
  await bearer.locator("button.authorize").click();
  await bearer.locator("button.authorize").waitFor({ state: "detached" }).catch(() => {});
  await ctx.shot("authorized");
  await dialog.locator("button.btn-done, button.close-modal").first().click();

  // Try it out: GET /api/inventory.
  const op = page.locator(".opblock-get").filter({
    has: page.locator('.opblock-summary-path[data-path="/api/inventory"]'),
  }).first();
  await op.locator(".opblock-summary").first().click();
  await op.locator("button.try-out__btn").click();
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor();
  await op.locator(".live-responses-table").scrollIntoViewIfNeeded();
  await ctx.shot("response");
  return {
    operations,
    problemLinks,
    status: (await status.textContent()).trim(),
    requestUrl: ((await op.locator(".request-url pre").first().textContent().catch(() => "")) || "").trim(),
    body: ((await op.locator(".live-responses-table .response-col_description pre").first().textContent().catch(() => "")) || "").slice(0, 400),
  };
}

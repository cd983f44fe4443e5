// The admin console's scenario (TestConsoleInBrowser): sign in, watch
// inventory go down, a rate limit, a reload with its diff, a rollback,
// sign out.
export default async function (ctx) {
  const page = ctx.page;
  const { token, readToken, subject } = ctx.params;
  const signIn = async (tok) => {
    await page.fill('#token', tok);
    await page.click('#signin-form button[type=submit]');
  };
  // What the console's entry module answers this browser now (its cookie
  // goes along; no bearer).
  const moduleStatus = () => page.evaluate(() => fetch('/console/console.js', { cache: 'no-store' }).then((r) => r.status));
  await page.goto(ctx.url);
  await page.locator('#signin-form').waitFor();
  const before = await moduleStatus();
  await ctx.shot('sign-in');

  await signIn(readToken);
  await page.locator('#signin-error', { hasText: 'admin role' }).waitFor();
  const refused = await moduleStatus();
  await ctx.shot('reader-refused');

  await signIn(token);
  await page.locator('#signout').waitFor(); // the sign-in page reloaded "/", now the console
  const inv = page.locator('article[data-upstream="inventory"]');
  await inv.locator('.card-head [data-state="UP"]').waitFor();
  await page.locator('tr[data-layer="failed_auth"]').waitFor();
  // The per-client and per-caller caps show beside the edge's.
  await page.locator('table.keycaps tr[data-cap="caller"] code', { hasText: 'shed.max_in_flight_per_caller' }).waitFor();
  await page.locator('table.keycaps tr[data-cap="client"]').waitFor();
  const first = (await page.locator('#live-version').textContent()).trim();
  // The trend labels say what they compare: the last 15 minutes against
  // the same minutes an hour earlier, which a fresh process has not got.
  await inv.locator('figcaption', { hasText: 'rate, last 15 min' }).waitFor();
  await inv.locator('.legend', { hasText: 'grey: none yet (the edge has run under an hour)' }).waitFor();
  await page.locator('#trend-span', { hasText: '15 min' }).waitFor();
  await ctx.shot('signed-in');

  await ctx.ask('kill-inventory', {});
  const killed = Date.now();
  await inv.locator('.card-head [data-state="DOWN"]').waitFor({ timeout: 10000 });
  await inv.locator('.breakers [data-state="open"]').first().waitFor({ timeout: 10000 });
  const downMillis = Date.now() - killed;
  await ctx.shot('inventory-down');
  // The docs' picture (docs/img/console.png): the upstreams alone, smaller,
  // once inventory's trend has a few points (one per 10 s), the last ones
  // with the errors since the kill.
  await page.waitForFunction(() => {
    const s = document.querySelectorAll('article[data-upstream="inventory"] svg.spark');
    return s.length === 2 && Number(s[0].dataset.points) >= 4 && Number(s[1].dataset.last) > 0.5;
  }, null, { timeout: 50000 });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1240, height: 580 });
  await ctx.shot('docs-console');
  await page.setViewportSize(size);
  await ctx.ask('stop-traffic', {});

  await ctx.ask('rate-limit', {});
  await page.locator('tr[data-layer="failed_auth"] .refused').filter({ hasNotText: /^0$/ }).waitFor({ timeout: 10000 });
  await page.locator('tr[data-layer="failed_auth"]').scrollIntoViewIfNeeded();
  await ctx.shot('rate-limited');

  await ctx.ask('edit-config', {});
  await page.click('#reload');
  await page.locator('#live-version').filter({ hasNotText: first }).waitFor();
  const second = (await page.locator('#live-version').textContent()).trim();
  const diff = page.locator(`.auditlog li[data-version="${second}"] .diff`).first();
  await diff.filter({ hasText: 'limits.plans.default.rate' }).waitFor();
  await diff.scrollIntoViewIfNeeded();
  await page.locator(`.auditlog li[data-version="${second}"] .origin`, { hasText: 'via reload by ' + subject }).first().waitFor();
  await ctx.shot('reloaded');

  await page.locator(`tr[data-version="${first}"] button.rollback`).click();
  await page.locator('#confirm[open]').waitFor();
  await page.locator('#confirm-file', { hasText: 'The config file on disk is unchanged.' }).waitFor();
  await ctx.shot('rollback-confirm');
  await page.click('#confirm-ok');
  await page.locator('#live-version', { hasText: first }).waitFor();
  await page.locator(`.auditlog li[data-version="${first}"][data-source="rollback"] .origin`, { hasText: 'via rollback by ' + subject }).first().waitFor();
  await page.locator('.live .origin', { hasText: 'via rollback by ' + subject }).waitFor();
  await page.locator('#live-version').scrollIntoViewIfNeeded();
  await ctx.shot('rolled-back');
  const during = await moduleStatus();

  await page.click('#signout');
  await page.locator('#signin-error', { hasText: 'Signed out.' }).waitFor();
  const after = await moduleStatus();
  const tokenLeft = await page.evaluate(() => sessionStorage.length);
  await ctx.shot('signed-out');
  return { first, second, downMillis, modules: { before, refused, during, after }, tokenLeft };
}

// A scenario of browsertest's own test: it opens the test's page, checks
// its heading, asks the Go test for a word, types it, and takes a
// screenshot of each state.
export default async function (ctx) {
  await ctx.page.goto(ctx.url);
  const heading = await ctx.page.locator("h1").textContent();
  await ctx.shot("loaded");
  const word = await ctx.ask("word", { heading });
  await ctx.page.fill("#in", word);
  await ctx.page.click("#go");
  await ctx.page.locator("#out", { hasText: word }).waitFor();
  await ctx.shot("typed");
  if (ctx.params.fail) throw new Error("asked to fail");
  return { heading, out: await ctx.page.locator("#out").textContent() };
}

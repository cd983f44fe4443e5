// Package docs holds Portico's reference pages (the README is the
// newcomer's path; these pages are the reference it links to). It has no
// code: its tests check the pages, as the packages whose behaviour a page
// describes check that page's generated tables (gateway/problem checks
// errors.md, deploy checks deploy/docs).
//
// TestLinks: every relative link and #anchor in README.md, docs/*.md and
// deploy/docs/*.md resolves. TestEveryPageIsLinked: every page here is
// reachable from the README. TestREADMEIsShort: the README stays a
// newcomer's page.
package docs

// init.js starts Swagger UI on /docs. It is a file of its own, not inline
// script, so the page's Content-Security-Policy allows scripts from the
// edge only ('self').
//
// It loads openapi.json itself (relative to the page, so it works under a
// path prefix too) and points the document's servers at the page's own
// origin and prefix: "Try it out" then calls the edge that served the page,
// whatever host and port it is on (the served document names
// localhost:43100, the port of `portico dev`).
"use strict";

(function () {
  var status = document.getElementById("portico-status");
  // base: the page's directory without the trailing slash, e.g.
  // http://127.0.0.1:43100 for http://127.0.0.1:43100/docs.
  var base = new URL(".", window.location.href).href.replace(/\/$/, "");
  var problems = new URL("problems", window.location.href).href;

  function fail(message) {
    status.textContent = "The API reference could not load: " + message;
    status.className = "portico-status error";
  }

  // linkProblems adds the problem type pages to the document's own words:
  // its description, and the Problem schema's type member.
  function linkProblems(spec) {
    var note = "\n\nAn error's `type` is one of the [problem type pages](" + problems + "): " +
      "what the code means, its HTTP status, whether to retry.";
    spec.info = spec.info || {};
    spec.info.description = (spec.info.description || "") + note;
    var schemas = (spec.components && spec.components.schemas) || {};
    var type = schemas.Problem && schemas.Problem.properties && schemas.Problem.properties.type;
    if (type) {
      type.description = (type.description || "") + " See the [problem type pages](" + problems + ").";
    }
  }

  fetch(new URL("openapi.json", window.location.href), { headers: { Accept: "application/json" } })
    .then(function (res) {
      if (!res.ok) {
        throw new Error("GET openapi.json answered " + res.status);
      }
      return res.json();
    })
    .then(function (spec) {
      spec.servers = [{ url: base, description: "This edge: the origin of this page" }];
      linkProblems(spec);
      status.textContent = "";
      window.ui = window.SwaggerUIBundle({
        spec: spec,
        dom_id: "#swagger-ui",
        deepLinking: true,
        displayRequestDuration: true,
        // No request to the public validator, nor any other host.
        validatorUrl: null,
        // The token typed into Authorize lives in this page only, never
        // in localStorage.
        persistAuthorization: false,
        // ?url= or ?configUrl= in the address cannot load another document.
        queryConfigEnabled: false,
        presets: [window.SwaggerUIBundle.presets.apis],
        layout: "BaseLayout",
      });
    })
    .catch(function (err) {
      fail(String(err && err.message ? err.message : err));
    });
})();

// The browser worker, as the client finds it next to itself when it runs from the sources (a bundler or dev
// server over adapters/): the stock entry. The build writes dist/worker-entry.browser.js instead, the same
// entry bundled into one file (tsup.config.ts).
import "./worker-entry.ts";

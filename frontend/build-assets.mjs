// Copy the front-end packages installed from the npm registry into static/vendor.
// Run by `npm run build` (the Makefile and the Dockerfile do); static/vendor is never committed.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "static", "vendor");
const files = [
  ["htmx.org/dist/htmx.min.js", "htmx.min.js"],
  // plotly.js with only the cartesian traces redolab draws (scatter, bar, heatmap): 1.5 MB, not 4.8
  ["plotly.js-cartesian-dist-min/plotly-cartesian.min.js", "plotly.min.js"],
  ["swagger-ui-dist/swagger-ui-bundle.js", "swagger-ui/swagger-ui-bundle.js"],
  ["swagger-ui-dist/swagger-ui.css", "swagger-ui/swagger-ui.css"],
];

rmSync(vendor, { recursive: true, force: true });
for (const [from, to] of files) {
  const target = join(vendor, to);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(here, "node_modules", from), target);
}
console.log(`front-end assets copied to ${vendor}`);

// The page is built into pkg/cli/ui/assets, which the Go binary embeds
// (go:embed) and inlines into --html files: fixed file names, one script and
// one stylesheet, no preload helper, so that the Go side can find and inline
// them (docs/ui.md).
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  build: {
    outDir: "../pkg/cli/ui/assets",
    emptyOutDir: true,
    modulePreload: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
    rollupOptions: {
      output: {
        entryFileNames: "app.js",
        assetFileNames: "app[extname]",
        inlineDynamicImports: true,
      },
    },
  },
});

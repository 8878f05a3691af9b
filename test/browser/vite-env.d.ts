// Vite's client types for the browser tests: `import.meta.glob` (and `?raw` imports), `import.meta.env`.
/// <reference types="vite/client" />

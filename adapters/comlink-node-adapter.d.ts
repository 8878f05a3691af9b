// Comlink ships the Node adapter's types as node-adapter.d.ts next to node-adapter.mjs; map the .mjs path to them.
declare module "comlink/dist/esm/node-adapter.mjs" {
	import nodeEndpoint from "comlink/dist/esm/node-adapter";
	export default nodeEndpoint;
}

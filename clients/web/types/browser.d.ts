export * from "./index.js";
export { TipSyncTipElement, defineTipElement } from "./element.js";

/** The types of build.mjs. */
export declare const ROOT: string;
export declare const BUILT_CLI: string;
/** dist/ has no type declarations: what a built module exports is untyped. */
// biome-ignore lint/suspicious/noExplicitAny: the built modules carry no types
export declare function importBuilt(module: string): Promise<any>;
export declare function assertBuilt(): void;

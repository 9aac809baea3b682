/** The types of search-words.mjs. */
export declare function vocabulary(): string[];
export declare function seededRandom(seed: number, scale: number): () => number;
export declare function zipfWord(words: readonly string[], random?: () => number): string;
export declare function zipfText(words: readonly string[], n: number, random?: () => number): string;

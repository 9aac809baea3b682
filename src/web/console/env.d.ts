/** Style sheets are bundled by esbuild into the page's one CSS file. */
declare module '*.css';

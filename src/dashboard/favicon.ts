/**
 * The dashboard's icon: a handset on the accent colour, as SVG (a few hundred
 * bytes, sharp at any size). Pages name it with <link rel="icon">, so a browser
 * asks no /favicon.ico of a reverse proxy's root; /favicon.ico answers with it
 * too, for anything that asks there anyway.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f6fed"/><path fill="#fff" d="M11.6 6.5c.8-.3 1.7 0 2.1.8l1.8 3.6c.4.8.2 1.7-.5 2.2l-1.7 1.3c1 2.3 2.8 4.2 5.1 5.3l1.4-1.7c.5-.7 1.5-.9 2.2-.5l3.6 1.9c.8.4 1.1 1.3.8 2.1l-.8 2.3c-.4 1.1-1.5 1.8-2.7 1.7C14.6 24.8 7.3 17.5 6.6 9.4c-.1-1.2.6-2.3 1.7-2.7z"/></svg>`;

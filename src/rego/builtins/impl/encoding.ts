/** Builtins of this area: not yet implemented here. */
export {};

/** commander's argParser for a repeatable option (`--session A --session B` -> ['A', 'B']). Loaded at start-up: keep it import-free. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

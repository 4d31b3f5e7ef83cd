/** Metadata is stored as JSON text: an object of string keys and string values. */
export function parseMetadata(text: string): Record<string, string> {
  return JSON.parse(text) as Record<string, string>;
}

/** An empty value means "no such key" (PATCH removes a key by setting it to ""). */
export function withoutEmptyValues(metadata: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== ''));
}

/**
 * The page's one way to the server: GET a JSON route, and either its
 * document or an ApiError carrying the stable code the server answered.
 */

export class ApiError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** A route's URL with its parameters (those left undefined or null are left out). */
export function routeUrl(route, params = {}) {
  const url = new URL(route, window.location.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  return url.pathname + url.search;
}

export async function api(route, params = {}) {
  const response = await fetch(routeUrl(route, params));
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body?.error ?? {};
    throw new ApiError(error.code ?? "internal_error", error.message ?? response.statusText);
  }
  return body;
}

// The console's JSON API (/api/…, served by lib/console/routes.js).

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.code = error?.code
  }
}

function url(path, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''))
  const q = query.toString()
  return `/api/${path}${q ? `?${q}` : ''}`
}

async function call(path, params, init) {
  const res = await fetch(url(path, params), { cache: 'no-store', ...init })
  const body = await res.json().catch(() => null)
  if (!res.ok) throw new ApiError(res.status, body?.error)
  return body
}

export function getJson(path, params = {}) {
  return call(path, params, {})
}

/** A write; the header tells the server the request comes from this page (see routes.js). */
export function postJson(path, params = {}) {
  return call(path, params, { method: 'POST', headers: { 'X-Steadfast-Console': '1' } })
}

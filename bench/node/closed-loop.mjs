// The closed loop every Node-side run uses: `inFlight` lanes, each running `once(id)` (start
// one instance and wait for its result) back to back until the warm-up and the window are
// over. Only completions inside the window count. Same shape as the Rust baseline's loop.
// With `untilFirstS` (smoke runs) the lanes go on past the window until something has
// completed, for at most that many seconds from the start: on a loaded machine the first
// completion can take longer than a smoke window, and a smoke run only checks progress.

/** Nearest-rank percentile of sorted values. */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1]
}

/**
 * @param {{ label: string, inFlight: number, warmupS: number, windowS: number, untilFirstS?: number,
 *           progress: (m: string) => void, once: (id: string) => Promise<void> }} o
 */
export async function closedLoop(o) {
  const started = performance.now()
  const from = started + o.warmupS * 1000
  const end = from + o.windowS * 1000
  const hardEnd = started + Math.max(o.untilFirstS ?? 0, o.warmupS + o.windowS) * 1000
  const doneAt = []
  const latencies = []
  let failures = 0
  let firstError = null
  const ticker = setInterval(() => {
    const s = (performance.now() - started) / 1000
    o.progress(`  ${o.label}: ${s.toFixed(0)} s, completed ${doneAt.length}, failures ${failures}`)
  }, 2000)
  const running = () => {
    const now = performance.now()
    return now < end || (doneAt.length === 0 && now < hardEnd)
  }
  const lane = async (k) => {
    for (let n = 0; running(); n++) {
      const id = `${o.label.replace(/\W+/g, '')}-${k}-${n}-${Math.round(started)}`
      const t = performance.now()
      try {
        await o.once(id)
        const now = performance.now()
        doneAt.push(now)
        latencies.push(now - t)
      } catch (e) {
        failures++
        firstError ??= e
        // A failing backend must not turn into a hot loop.
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  }
  // Lanes stop starting new instances at the end of the window; wait for the window only,
  // not for instances still in flight (their results would not count anyway).
  const lanes = Array.from({ length: o.inFlight }, (_, k) => lane(k))
  await new Promise((r) => setTimeout(r, Math.max(0, end - performance.now())))
  while (running()) await new Promise((r) => setTimeout(r, 100))
  clearInterval(ticker)
  const inWindow = []
  for (let i = 0; i < doneAt.length; i++) if (doneAt[i] >= from && doneAt[i] < end) inWindow.push(latencies[i])
  inWindow.sort((x, y) => x - y)
  const ms = (v) => Math.round(v * 100) / 100
  // Let in-flight lanes settle quietly before the caller tears the backend down.
  const settled = Promise.allSettled(lanes)
  await Promise.race([settled, new Promise((r) => setTimeout(r, 5000))])
  if (inWindow.length === 0 && firstError) throw firstError
  return {
    in_flight: o.inFlight,
    orchestrations: inWindow.length,
    window_s: o.windowS,
    orchestrations_per_s: ms(inWindow.length / o.windowS),
    latency_ms: { p50: ms(percentile(inWindow, 50)), p99: ms(percentile(inWindow, 99)), max: ms(inWindow.at(-1) ?? 0) },
    completed_total: doneAt.length,
    failures,
    first_error: firstError ? String(firstError.message ?? firstError) : null,
  }
}

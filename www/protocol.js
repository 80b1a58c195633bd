/* The protocol between the page (www/engine.js) and the engine workers (www/engine-worker.js): every
 * message type and its fields. Both sides read the names from here.
 *
 * A plain script that sets `self.PROTOCOL`, so that it loads both ways: the classic worker calls
 * `importScripts('protocol.js')`, the ES-module page does `import './protocol.js'` (for its side
 * effect) and reads `globalThis.PROTOCOL`. It declares nothing else at top level.
 *
 * page -> worker (requests; a request/reply call carries an `id` the reply repeats)
 * @typedef {'a' | 'b'} Side                       anything else is refused (field error `side`)
 * @typedef {{field: string, message: string}} FieldError
 * @typedef {{type: 'run', id: number, experiment: object, side: Side, key?: string}} RunMsg
 *          run one side; replaces the worker's current run. `key` (optional) names the run within
 *          its job (e.g. `a3`: side A, repeat 3); every reply about the run repeats it
 * @typedef {{type: 'cancel', id: number}} CancelMsg        stop run `id`; answered by `cancelled`
 * @typedef {{type: 'decode_link', id: number, query: string}} DecodeLinkMsg
 *          -> {type, id, experiment: object, errors: FieldError[]}
 * @typedef {{type: 'encode_link', id: number, experiment: object}} EncodeLinkMsg  -> {type, id, link: string}
 * @typedef {{type: 'validate', id: number, experiment: object}} ValidateMsg
 *          -> {type, id, ok: boolean, errors: FieldError[], work: number|null} (always this shape; ok iff
 *             no errors; work: one side's estimated events, what a run weighs for the time left)
 * @typedef {{type: 'topology', id: number, experiment: object, side: Side, cpu: number}} TopologyMsg
 *          -> {type, id, topology: object}
 * @typedef {{type: 'topology_summary', id: number, experiment: object}} TopologySummaryMsg
 *          -> {type, id, summary: object}  the machine the engine builds: nodes, LLCs, clusters and
 *             their sizes, and the settings it adjusted (src/machine_summary.rs)
 * @typedef {{type: 'compare', id: number, a: object, b: object}} CompareMsg
 *          -> {type, id, result: object}  the engine's Delta::between(a, b)
 * @typedef {{type: 'sweep_cpus', id: number, text: string}} SweepCpusMsg
 *          -> {type, id, ok: boolean, cpus: number[], errors: FieldError[]} the CPU list parsed and
 *             checked by the engine (always this shape)
 * @typedef {{type: 'sweep_experiment', id: number, experiment: object, cpus: number}} SweepExperimentMsg
 *          -> {type, id, experiment: object}  the experiment resized to 2 sockets × cores × SMT2
 * @typedef {{type: 'sweep_point', id: number, cpus: number, a: object, b: object}} SweepPointMsg
 *          -> {type, id, point: object}  one sweep row (SweepPoint) from the A and B reports
 * @typedef {{type: 'repeat_seeds', id: number, seed: number, n: number}} RepeatSeedsMsg
 *          -> {type, id, seeds: number[]}  the seeds of n repeats (repeat::seeds; all below 2^53)
 * @typedef {{type: 'repeat_table', id: number, a: object[], b: object[]}} RepeatTableMsg
 *          -> {type, id, table: object}  the repeat table (repeat::Table) of the reports of A and B
 * @typedef {{type: 'validation_plan', id: number, seconds: number, repeats: number}} ValidationPlanMsg
 *          -> {type, id, runs: {experiment: object, side: Side, work: number|null}[]}  the runs
 *             `schedplay validate` makes, each with its estimated events (the plans of sensitivity and
 *             curve carry `work` per run too)
 * @typedef {{type: 'validation_table', id: number, seconds: number, repeats: number, reports: object[]}} ValidationTableMsg
 *          -> {type, id, rows: object[], headline: string}  the validation rows (`validate --json`) from
 *             the runs' reports, in plan order, and the headline (behaviour checks and inputs apart)
 * @typedef {{type: 'sensitivity_plan', id: number, experiment: object, only?: string[]}} SensitivityPlanMsg
 *          -> {type, id, plan: {points: number, seeds: number[], ranges: {name, value, low, high, unit, why, why_low, why_high}[],
 *             runs: {point: number, experiment: object, side: Side}[]}}  the runs of `schedplay sensitivity` (one at
 *             a time over each assumption's range; `only`: these assumptions, absent: all)
 * @typedef {{type: 'sensitivity_summary', id: number, experiment: object, only?: string[], reports: object[]}} SensitivitySummaryMsg
 *          -> {type, id, summary: object}  the bands and tornados (`sensitivity --json`) from every run's
 *             report, in plan order
 * @typedef {{type: 'trace', id: number, experiment: object, side: Side, format: 'pftrace' | 'json', from?: number, to?: number}} TraceMsg
 *          -> {type, id, bytes: Uint8Array, format, from_s: number, to_s: number, cut: boolean, events: number, summary: string}
 *             the side run again with a trace of simulated seconds [from, to) as Perfetto protobuf or
 *             Chrome JSON (docs/TRACE.md); no `to`: the longest window from `from` that fits the
 *             event cap (`cut`: the cap ended it), said in `summary`
 * @typedef {{type: 'schedstat_diff', id: number, a: object, b: object}} SchedstatDiffMsg
 *          -> {type, id, sections: {domain: string|null, rows: {name, a, b, change}[]}[]}  perf sched
 *             stats diff of two DoneMsg.schedstat summaries: CPU totals, then every field per domain
 * @typedef {{type: 'link_note', id: number, experiment: object}} LinkNoteMsg
 *          -> {type, id, note: string|null}  what the experiment's link cannot promise (a link
 *             carrying an rt-app file longer than 8000 characters), or null
 * @typedef {{type: 'story_check', id: number, name: string, a: object[], b: object[]}} StoryCheckMsg
 *          -> {type, id, checks: object[]}  the story's validation rows checked on its run (every
 *             repeat of A and B): outcome (id, what, published, model, model_ci95, tolerance,
 *             status) and published_value (validation::check)
 * @typedef {{type: 'percentile_bounds', id: number, report: object}} PercentileBoundsMsg
 *          -> {type, id, bounds: object}  the histogram bucket [lo, hi) of each percentile of the
 *             cards (latency_ms.p95, wakeup_latency_us.p50/p95/p99): a percentile is a bucket bound
 * @typedef {{type: 'import_machine', id: number, text: string, hardware: string}} ImportMachineMsg
 *          -> {type, id, machine: {cpu_map: string, preset: string, closest: boolean, summary: object, notes: string[], arch: string|null}}
 *             lscpu + numactl text parsed by the engine; `hardware` '' picks the closest preset;
 *             a bad text is refused with `machine_file` errors naming line:column
 * @typedef {{type: 'curve_plan', id: number, experiment: object, knob: string, values: string, symbol: string}} CurvePlanMsg
 *          -> {type, id, plan: {curve: object, points: {index: number, value: number, runs: {experiment: object, side: Side}[]}[]}}
 *             the load curve's runs (`schedplay curve`): the experiment at each value of an integer
 *             workload knob (`values` typed; empty: half to four times the knob's value)
 * @typedef {{type: 'curve_line', id: number, curve: object, index: number, reports: object[]}} CurveLineMsg
 *          -> {type, id, line: object}  one point's CurveLine (`curve --json`) from its runs' reports
 *             in plan order
 * @typedef {{type: 'maxload_plan', id: number, experiment: object, percentile: number, bound_us: number}} MaxloadPlanMsg
 *          -> {type, id, plan: {maxload: object, seeds: number[]}}  "Max load at a latency bound"
 *             (`schedplay maxload`): one search per seed (repeat) and side; refused by field
 *             (`percentile`, `bound_us`, `workload`, the experiment's)
 * @typedef {{type: 'maxload_step', id: number, maxload: object, index: number, seed: number, probes: object[], report: object|null}} MaxloadStepMsg
 *          -> {type, id, step: {probes: object[], next: {rate, left, experiment, work}|null, line: object|null}}
 *             one step of a search (the CLI's rule): the report of the probe asked for last (null at
 *             the start) read in, then the next probe's run, or the finished search (`maxload --json`)
 * @typedef {{type: 'maxload_summary', id: number, lines: object[]}} MaxloadSummaryMsg
 *          -> {type, id, summary: {headline: string, text: string, rate_at_bound: object}}  the
 *             rate at the bound over the searches (mean, 95% interval) as the CLI prints it
 *
 * worker -> page
 * @typedef {{type: 'ready', presets: object}} ReadyMsg      once, after the wasm module is instantiated
 * @typedef {{type: 'progress', id: number, side: Side, key?: string, frac: number, series: Object<string, Float64Array>}} ProgressMsg
 *          after each ~30 ms slice; series keyed by the engine's series names (buffers transferred)
 * @typedef {{type: 'done', id: number, side: Side, key?: string, report: object, schedstat: object}} DoneMsg
 *          `schedstat`: /proc/schedstat v17 over the measured window, summed over CPUs per domain
 *          ({version, cpu: [name, value][], field_names, domains: {name, fields}[]})
 * @typedef {{type: 'cancelled', id: number, side: Side, key?: string}} CancelledMsg
 * @typedef {{type: 'error', id?: number, side?: Side, kind: ErrorKind, errors: FieldError[], message: string}} ErrorMsg
 *          a failed request or run; `kind` says what it means (ERROR_KINDS)
 * @typedef {'invalid' | 'failed' | 'fatal'} ErrorKind
 */
'use strict';
(function (g) {
  const REQUESTS = ['run', 'cancel', 'decode_link', 'encode_link', 'validate', 'topology', 'compare',
    'sweep_cpus', 'sweep_experiment', 'sweep_point', 'repeat_seeds', 'repeat_table', 'validation_plan',
    'validation_table', 'trace', 'topology_summary', 'import_machine', 'story_check', 'percentile_bounds',
    'schedstat_diff', 'link_note', 'sensitivity_plan', 'sensitivity_summary', 'curve_plan', 'curve_line', 'maxload_plan',
    'maxload_step', 'maxload_summary'];
  const REPLIES = ['ready', 'progress', 'done', 'cancelled', 'error'];
  const types = {};
  for (const t of REQUESTS.concat(REPLIES)) types[t] = t;
  g.PROTOCOL = Object.freeze({
    /** Message types by name: MSG.run === 'run'. */
    MSG: Object.freeze(types),
    REQUESTS: Object.freeze(REQUESTS),
    REPLIES: Object.freeze(REPLIES),
    SIDES: Object.freeze(['a', 'b']),
    /** Whether `s` is a side ('a' or 'b'). */
    isSide: (s) => s === 'a' || s === 'b',
    ERROR_KINDS: Object.freeze({
      /** The input was refused: `errors` names each bad field. The engine is fine. */
      invalid: 'invalid',
      /** A call failed for another reason (`message`). The engine is fine. */
      failed: 'failed',
      /** The engine trapped or did not load: the page terminates both workers and starts fresh ones. */
      fatal: 'fatal',
    }),
    /** The name of a thrown engine Error that carries field errors (src/wasm.rs INVALID_INPUT). */
    INVALID_INPUT: 'InvalidInput',
  });
})(typeof self !== 'undefined' ? self : globalThis);

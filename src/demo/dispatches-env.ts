/**
 * The variable through which `catherd demo` tells its simulated agent the folder of its dispatches. The
 * agent's own dispatch folder is that joined with its CATHERD_DISPATCH; it stays quiet until the
 * supervisor's stall notice appears there.
 */
export const DEMO_DISPATCHES_ENV = "CATHERD_DEMO_DISPATCHES";

/**
 * A factor on the simulated agent's pauses between its events (default 1; 0.1 is ten times as fast): for
 * trying the README's examples with it, where nobody watches it work. Its quiet until a stall notice
 * under `catherd demo` waits for the notice, whatever the pace.
 */
export const SIMULATED_PACE_ENV = "CATHERD_SIMULATED_PACE";

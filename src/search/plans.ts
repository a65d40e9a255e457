/**
 * Plan table of search indexes: the quota fields every index shows and the service enforces.
 * Defaults follow Upstash Search's published free and pay-as-you-go limits; each can be
 * overridden by the search-plan-free / search-plan-payg options ("max_daily_queries=100,...").
 * -1 means unlimited.
 */

export const PLAN_NAMES = ['free', 'payg', 'fixed'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  max_vector_count: number;
  max_monthly_reranks: number;
  max_daily_updates: number;
  max_daily_queries: number;
  max_monthly_bandwidth: number;
  max_writes_per_second: number;
  max_query_per_second: number;
  max_reads_per_request: number;
  max_writes_per_request: number;
}

export const DEFAULT_PLANS: Record<'free' | 'payg', Plan> = {
  free: {
    max_vector_count: 10_000,
    max_monthly_reranks: 0,
    max_daily_updates: 10_000,
    max_daily_queries: 10_000,
    max_monthly_bandwidth: 10 * 1024 * 1024 * 1024,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
  },
  payg: {
    max_vector_count: 2_000_000,
    max_monthly_reranks: -1,
    max_daily_updates: -1,
    max_daily_queries: -1,
    max_monthly_bandwidth: -1,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
  },
};

/** Parse "key=value,key=value" over a default plan; throws on an unknown key or a non-integer. */
export function parsePlan(base: Plan, spec: string): Plan {
  const plan = { ...base };
  for (const part of spec.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = part.indexOf('=');
    const k = part.slice(0, eq).trim();
    const v = Number(part.slice(eq + 1).trim());
    if (eq < 0 || !(k in plan)) throw new Error(`unknown search plan field '${part}': use ${Object.keys(base).join(', ')}`);
    if (!Number.isInteger(v) || v < -1) throw new Error(`search plan field ${k} needs an integer >= -1, got '${part.slice(eq + 1)}'`);
    plan[k as keyof Plan] = v;
  }
  return plan;
}

/** The table in force; 'fixed' is shown like payg but cannot be created (as on the service). */
export function planTable(free: string, payg: string): Record<PlanName, Plan> {
  const f = parsePlan(DEFAULT_PLANS.free, free);
  const p = parsePlan(DEFAULT_PLANS.payg, payg);
  return { free: f, payg: p, fixed: p };
}

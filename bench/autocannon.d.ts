// The part of autocannon's programmatic API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    connections?: number;
    amount?: number;
    timeout?: number;
    requests?: {
      setupRequest?: (request: { body?: string }) => { body?: string };
      onResponse?: (status: number) => void;
    }[];
  }
  interface Result {
    duration: number;
    latency: Histogram;
    requests: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}

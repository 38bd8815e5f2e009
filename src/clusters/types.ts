// The clusters the daemon serves and what it knows of reaching them. Type-only.

/** One cluster the daemon serves: its name and the credentials kubectl uses for it. */
export interface ClusterEntry {
  name: string;
  kubeconfig?: string;
  context?: string;
}

/** The last access check of a cluster. */
export interface ClusterAccess {
  name: string;
  reachable: boolean;
  /** What is wrong and what to do (absent when reachable). */
  detail?: string;
  checkedAt: string;
}

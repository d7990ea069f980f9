import { describe } from 'vitest';
import { requireRedisCluster } from '../../../test-support/redis-cluster.js';
import { clusterCliSuite } from './cluster-suite.js';

describe.runIf(requireRedisCluster())('verikit on a local 3-master Redis Cluster (--cluster, two redis:// seeds)', () => {
  clusterCliSuite();
});

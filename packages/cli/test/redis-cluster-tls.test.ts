import { describe } from 'vitest';
import { requireRedisCluster } from '../../../test-support/redis-cluster.js';
import { clusterCliSuite } from './cluster-suite.js';

describe.runIf(requireRedisCluster({ tls: true }))(
  'verikit on a local 3-master Redis Cluster over TLS, nodes named as a managed one names them, with a password (--cluster, two rediss:// seeds)',
  () => {
    // URL-encoded in the seeds (its @, :, comma and %), decoded by the CLI.
    clusterCliSuite({ tls: true, password: 'p@ss:w0rd,1%' });
  },
);

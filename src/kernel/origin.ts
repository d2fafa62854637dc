/**
 * Who started a call. `agent`: the model. `nested`: a governed child (program, batch, custom
 * tools). `host_direct`: the trusted host (`session.tool` and typed helpers). `host_direct_nested`:
 * a child of a host-direct batch or program.
 */
export type Origin = 'agent' | 'nested' | 'host_direct' | 'host_direct_nested'

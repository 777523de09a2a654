/** The neighbours' thread: one computation, its answer, and it ends (see nearest.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { nearestNeighbours, type NearestOptions } from './nearest.js';

const { ids, vectors, options } = workerData as { ids: number[]; vectors: Float32Array[]; options: NearestOptions };
parentPort!.postMessage([...nearestNeighbours(ids, vectors, options)]);

export { idempotencyStoreContract, type StoreContractCase, StoreContractError, type StoreContractOptions } from './store-contract.js';

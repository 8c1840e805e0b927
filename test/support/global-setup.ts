// Filled in by the test-infrastructure work: checks that PostgreSQL and RabbitMQ answer.
export default function setup(): void {}

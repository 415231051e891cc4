import { defineAgent } from 'xswarm';
const weather = defineAgent({
  id: 'weather-agent', name: 'Weather Agent',
  description: 'Provides weather information and forecasts',
  instructions: 'You are a weather expert. Use get_forecast.',
  tools: [forecast],
});
export {};
